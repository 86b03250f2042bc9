package object

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// v8Size is how many bytes V8's serializer (ValueSerializer, format 15,
// which the platform's serializeAttachment measures) writes for the value
// the JSON data holds: its header, then the value, tag by tag. It knows
// what JSON can hold: null, booleans, numbers (a small integer as a Smi,
// the rest as a double), strings (one byte a character when every
// character fits, else two), arrays (dense) and objects (an integer-like
// key as a number).
func v8Size(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return len(data) + 2
	}
	return 2 + v8Value(v) // 0xFF, the version
}

func v8Value(v any) int {
	switch x := v.(type) {
	case nil, bool:
		return 1
	case json.Number:
		return v8Number(string(x))
	case string:
		return v8String(x)
	case []any:
		n := 1 + varintSize(uint64(len(x))) // 'A', length
		for _, e := range x {
			n += v8Value(e)
		}
		return n + 1 + varintSize(0) + varintSize(uint64(len(x))) // '$', properties, length
	case map[string]any:
		n := 1 // 'o'
		for k, e := range x {
			if i, err := strconv.ParseUint(k, 10, 32); err == nil && strconv.FormatUint(i, 10) == k && i < math.MaxUint32 {
				n += v8Number(k)
			} else {
				n += v8String(k)
			}
			n += v8Value(e)
		}
		return n + 1 + varintSize(uint64(len(x))) // '{', properties
	}
	return 1
}

// v8Number is a number's size: a Smi (31 bits) is 'I' and a zigzag
// varint, anything else 'N' and eight bytes.
func v8Number(s string) int {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil && i >= -(1<<30) && i < 1<<30 {
		return 1 + varintSize(uint64((i<<1)^(i>>63)))
	}
	return 9
}

// v8String is a string's size: '"' and Latin-1 bytes when every character
// fits in one, else 'c' and UTF-16 units (two bytes each, after a padding
// byte when the length would leave them unaligned; not counted here).
func v8String(s string) int {
	one, units := true, 0
	for _, r := range s {
		if r > 0xFF {
			one = false
		}
		units++
		if r > 0xFFFF {
			units++
		}
	}
	if one {
		return 1 + varintSize(uint64(units)) + units
	}
	return 1 + varintSize(uint64(2*units)) + 2*units
}

// varintSize is the length of x as a base-128 varint.
func varintSize(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
