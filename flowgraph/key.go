package flowgraph

import (
	"fmt"
	"slices"
	"strings"
)

// KeyFieldNames returns every key field in the order headers list them
// (Header.KeyFields): KeyCall, part of every key, then those a recording
// may add.
func KeyFieldNames() []string {
	return []string{KeyCall, KeySite, KeyBytes, KeyPartner, KeyComm}
}

// ParseKey reads a node key as MPIFLOW_KEY and mpiflow run --key give it,
// as the recorder reads it: key field names separated by commas, empty
// ones skipped, KeyCall implied; "" is the default key, call and site. It
// returns the key's fields in KeyFieldNames order.
func ParseKey(s string) ([]string, error) {
	if s == "" {
		return []string{KeyCall, KeySite}, nil
	}
	all := KeyFieldNames()
	named := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		if f != "" && !slices.Contains(all, f) {
			return nil, fmt.Errorf("%q is not a key field (%s)", f, strings.Join(all, ", "))
		}
		if f != "" {
			named[f] = true
		}
	}
	if len(named) == 0 { // ",," names nothing: an error, not the default
		return nil, fmt.Errorf("names no field (%s)", strings.Join(all, ", "))
	}
	fields := []string{KeyCall}
	for _, f := range all[1:] {
		if named[f] {
			fields = append(fields, f)
		}
	}
	return fields, nil
}
