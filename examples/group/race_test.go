//go:build race

package main

// raceBuild: the tests run under the race detector, and so does the program they build.
const raceBuild = true
