module github.com/feedkit/feedkit/otelfeedkit

go 1.26.0

require github.com/feedkit/feedkit v0.0.0

replace github.com/feedkit/feedkit => ../
