package object

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Cursor is what SQL.Exec returns: the rows of its last statement, read
// in full when Exec returned, and what the Exec read and wrote.
//
// Values are SQLite's, as it stores them: int64, float64, string, []byte
// or nil, whatever a column's declared type (text in a column declared
// DATE, DATETIME or TIMESTAMP reads as that text, as on the platform).
type Cursor struct {
	cols []string
	rows [][]any
	i    int // the current row, -1 before the first Next
	// RowsRead counts the rows the Exec's last statement returned (the
	// platform counts the rows its SQLite visits: more for a statement
	// that scans rows it does not return, see docs/rules.md).
	RowsRead int
	// RowsWritten counts the rows the Exec's last statement inserted,
	// updated or deleted (triggers included), and the index entries its
	// inserts and updates wrote, as the platform counts them (see
	// docs/rules.md).
	RowsWritten int
}

// Columns returns the column names of the rows.
func (c *Cursor) Columns() []string { return append([]string(nil), c.cols...) }

// Len returns the number of rows.
func (c *Cursor) Len() int { return len(c.rows) }

// Next moves to the next row and reports whether there is one.
func (c *Cursor) Next() bool {
	if c.i+1 >= len(c.rows) {
		c.i = len(c.rows)
		return false
	}
	c.i++
	return true
}

// Row returns the current row as a map from column name to value (nil
// before the first Next or after the last row).
func (c *Cursor) Row() map[string]any {
	if c.i < 0 || c.i >= len(c.rows) {
		return nil
	}
	return c.rowMap(c.rows[c.i])
}

func (c *Cursor) rowMap(row []any) map[string]any {
	m := make(map[string]any, len(c.cols))
	for j, name := range c.cols {
		m[name] = row[j]
	}
	return m
}

// Rows returns every row as a map from column name to value.
func (c *Cursor) Rows() []map[string]any {
	out := make([]map[string]any, len(c.rows))
	for i, r := range c.rows {
		out[i] = c.rowMap(r)
	}
	return out
}

// Values returns every row as its values in column order.
func (c *Cursor) Values() [][]any {
	out := make([][]any, len(c.rows))
	for i, r := range c.rows {
		out[i] = append([]any(nil), r...)
	}
	return out
}

// Scan copies the current row into dst: a pointer to a struct, whose
// fields take the columns of their name (a `db:"name"` tag, or the field
// name, ignoring case; columns without a field are skipped), a pointer to
// a map[string]any, or, for a one-column row, a pointer to a value.
func (c *Cursor) Scan(dst any) error {
	if c.i < 0 || c.i >= len(c.rows) {
		return fmt.Errorf("%w: Scan: no current row (call Next first)", ErrSQL)
	}
	return c.scan(c.rows[c.i], dst)
}

// One copies the only row into dst, as Scan does; it is an error if there
// is no row or more than one.
func (c *Cursor) One(dst any) error {
	// The platform's words (cursor.one(), real workerd 1.20261117.1).
	switch {
	case len(c.rows) == 0:
		//lint:ignore ST1005 the platform's words end with a period
		return fmt.Errorf("%w: One: Expected exactly one result from SQL query, but got no results.", ErrSQL)
	case len(c.rows) > 1:
		//lint:ignore ST1005 the platform's words end with a period
		return fmt.Errorf("%w: One: Expected exactly one result from SQL query, but got multiple results.", ErrSQL)
	}
	return c.scan(c.rows[0], dst)
}

// All copies every row into dst, a pointer to a slice of what Scan fills.
func (c *Cursor) All(dst any) error {
	p := reflect.ValueOf(dst)
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Slice {
		return fmt.Errorf("%w: All: dst is %T, want a non-nil pointer to a slice", ErrSQL, dst)
	}
	s := reflect.MakeSlice(p.Elem().Type(), len(c.rows), len(c.rows))
	for i, r := range c.rows {
		if err := c.scan(r, s.Index(i).Addr().Interface()); err != nil {
			return fmt.Errorf("row %d: %w", i+1, err)
		}
	}
	p.Elem().Set(s)
	return nil
}

func (c *Cursor) scan(row []any, dst any) error {
	p := reflect.ValueOf(dst)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return fmt.Errorf("%w: scan: dst is %T, want a non-nil pointer", ErrSQL, dst)
	}
	v := p.Elem()
	switch {
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.Interface:
		v.Set(reflect.ValueOf(c.rowMap(row)).Convert(v.Type()))
		return nil
	case v.Kind() == reflect.Struct && v.Type() != reflect.TypeFor[time.Time]():
		t := v.Type()
		for j, name := range c.cols {
			f := fieldFor(t, name)
			if f == nil {
				continue
			}
			if err := assign(v.FieldByIndex(f.Index), row[j]); err != nil {
				return fmt.Errorf("%w: column %q into field %s: %w", ErrSQL, name, f.Name, err)
			}
		}
		return nil
	}
	if len(row) != 1 {
		return fmt.Errorf("%w: scan: %d columns into a %s, want one column (or a struct or map)", ErrSQL, len(row), v.Type())
	}
	if err := assign(v, row[0]); err != nil {
		return fmt.Errorf("%w: column %q: %w", ErrSQL, c.cols[0], err)
	}
	return nil
}

// fieldFor finds t's exported field for column name.
func fieldFor(t reflect.Type, name string) *reflect.StructField {
	var byName *reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("db"), ",")
		if tag == "-" {
			continue
		}
		if tag == name {
			return &f
		}
		if tag == "" && byName == nil && strings.EqualFold(f.Name, name) {
			byName = &f
		}
	}
	return byName
}

// assign stores SQLite value x in v, converting between compatible kinds.
func assign(v reflect.Value, x any) error {
	if x == nil {
		v.SetZero()
		return nil
	}
	if v.Kind() == reflect.Pointer {
		e := reflect.New(v.Type().Elem())
		if err := assign(e.Elem(), x); err != nil {
			return err
		}
		v.Set(e)
		return nil
	}
	if v.Kind() == reflect.Interface && v.NumMethod() == 0 {
		v.Set(reflect.ValueOf(x))
		return nil
	}
	if done, err := assignNumber(v, x); done || err != nil {
		return err
	}
	if assignText(v, x) {
		return nil
	}
	if xv := reflect.ValueOf(x); xv.Type().AssignableTo(v.Type()) {
		v.Set(xv)
		return nil
	}
	return fmt.Errorf("cannot store %T %v in %s", x, x, v.Type())
}

// assignNumber stores x in v when v is a number or a bool and x converts
// to it; done is false when it does not apply, err says why x does not fit.
func assignNumber(v reflect.Value, x any) (done bool, err error) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch n := x.(type) {
		case int64:
			if v.OverflowInt(n) {
				return false, fmt.Errorf("%d overflows %s", n, v.Type())
			}
			v.SetInt(n)
			return true, nil
		case float64:
			if n == float64(int64(n)) && !v.OverflowInt(int64(n)) {
				v.SetInt(int64(n))
				return true, nil
			}
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n, ok := x.(int64); ok {
			if n < 0 || v.OverflowUint(uint64(n)) {
				return false, fmt.Errorf("%d overflows %s", n, v.Type())
			}
			v.SetUint(uint64(n))
			return true, nil
		}
	case reflect.Float32, reflect.Float64:
		switch n := x.(type) {
		case int64:
			v.SetFloat(float64(n))
			return true, nil
		case float64:
			v.SetFloat(n)
			return true, nil
		}
	case reflect.Bool:
		if n, ok := x.(int64); ok {
			v.SetBool(n != 0)
			return true, nil
		}
	}
	return false, nil
}

// assignText stores x in v when v is a string or a byte slice and x is
// text, bytes or (for a string) a time; it reports whether it did.
func assignText(v reflect.Value, x any) bool {
	switch v.Kind() {
	case reflect.String:
		switch s := x.(type) {
		case string:
			v.SetString(s)
			return true
		case []byte:
			v.SetString(string(s))
			return true
		case time.Time:
			v.SetString(s.UTC().Format("2006-01-02 15:04:05"))
			return true
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			switch s := x.(type) {
			case []byte:
				v.SetBytes(append([]byte(nil), s...))
				return true
			case string:
				v.SetBytes([]byte(s))
				return true
			}
		}
	}
	return false
}
