package clone

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Want says what a value of type t is, in the terms of a user who writes
// JSON or YAML rather than Go: "a string", "an integer from 0 to 255", "a
// list of strings", "a mapping with id, name".
func Want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return fmt.Sprintf("an integer from %d to %d", int64(math.MinInt64)>>(64-t.Bits()), int64(math.MaxInt64)>>(64-t.Bits()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("an integer from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list of " + plainType(t.Elem())
	case reflect.Map:
		return "a mapping of " + plainType(t.Key()) + " to " + plainType(t.Elem())
	case reflect.Struct:
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := f.Name
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
				name = tag
			}
			names = append(names, name)
		}
		return "a mapping with " + strings.Join(names, ", ")
	case reflect.Pointer:
		return Want(t.Elem()) + " or null"
	}
	return "a value of Go type " + t.String()
}

// plainType names the items of a list or mapping: "strings", "integers".
func plainType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "strings"
	case reflect.Bool:
		return "bools"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integers"
	case reflect.Float32, reflect.Float64:
		return "numbers"
	case reflect.Slice, reflect.Array:
		return "lists"
	case reflect.Map, reflect.Struct:
		return "mappings"
	case reflect.Interface:
		return "values"
	}
	return "values of Go type " + t.String()
}
