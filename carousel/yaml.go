package carousel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

// configFile is the YAML file's shape: a list of cycles, in publish-carousel's field names.
type configFile struct {
	Cycles []wireCycle `yaml:"cycles"`
}

// ParseConfig reads cycle configurations from YAML:
//
//	cycles:
//	  - name: methode-whole
//	    type: ThrottledWholeCollection
//	    origin: methode-web-pub
//	    collection: methode
//	    coolDown: 5m
//	    throttle: 15s
//	  - name: wordpress-hour
//	    type: FixedWindow
//	    origin: wordpress
//	    collection: wordpress
//	    coolDown: 5m
//	    timeWindow: 1h
//	    minimumThrottle: 1m
//
// It refuses the whole file, before anything starts, when any field is missing, bad or
// unknown, or a name repeats: the error joins one FieldError per problem, each naming
// its field as in "cycles[1].timeWindow", and wraps ErrInvalidConfig.
func ParseConfig(r io.Reader) ([]CycleConfig, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("carousel: reading config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f configFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FieldError{Field: "cycles", Problem: "is required (the file is empty)"}
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if len(f.Cycles) == 0 {
		return nil, &FieldError{Field: "cycles", Problem: "must list at least one cycle"}
	}
	var errs []error
	out := make([]CycleConfig, 0, len(f.Cycles))
	seen := make(map[string]int)
	for i, w := range f.Cycles {
		path := fmt.Sprintf("cycles[%d].", i)
		c, err := w.config(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if j, dup := seen[c.Name]; dup {
			errs = append(errs, &FieldError{Field: path + "name", Value: c.Name, Problem: fmt.Sprintf("repeats cycles[%d].name", j)})
			continue
		}
		seen[c.Name] = i
		out = append(out, c)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// LoadConfigFile is ParseConfig of the file at path.
func LoadConfigFile(path string) ([]CycleConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("carousel: %w", err)
	}
	defer f.Close()
	cs, err := ParseConfig(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cs, nil
}
