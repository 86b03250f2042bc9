package object

import (
	"encoding/hex"
)

// ID identifies one object of a namespace: 64 hex digits. Ids made from
// the same name in the same namespace are equal (rule O1).
type ID struct {
	ns   string
	raw  [32]byte
	name string
}

// String returns the id's 64 hex digits.
func (id ID) String() string { return hex.EncodeToString(id.raw[:]) }

// Name returns the name the id was made from, or "" for a unique id.
func (id ID) Name() string { return id.name }

// Namespace returns the name of the namespace the id belongs to.
func (id ID) Namespace() string { return id.ns }

// IsZero reports whether id is the zero ID.
func (id ID) IsZero() bool { return id.raw == [32]byte{} }

// Equal reports whether two ids name the same object.
func (id ID) Equal(o ID) bool { return id.raw == o.raw }

// Label is the id's name when it has one, else its hex digits.
func (id ID) Label() string {
	if id.name != "" {
		return id.name
	}
	return id.String()
}

// Bytes returns the id's 32 bytes.
func (id ID) Bytes() [32]byte { return id.raw }
