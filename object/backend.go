package object

import (
	"errors"
	"fmt"
	"time"
)

// Backend is the storage a class is declared with on the platform, which
// decides what its objects' storage can do (rule L8): a SQLite-backed
// class (`new_sqlite_classes` in wrangler, the default for new classes)
// has the SQL API and larger key-value limits; a key-value-backed one
// (`new_classes`) has no SQL and the older limits. A namespace is
// SQLite-backed unless runtime.KeyValueBacked says otherwise.
type Backend uint8

const (
	// SQLiteBacked is the storage of a class declared with
	// new_sqlite_classes: State.SQL is the object's database, and a
	// key-value entry (its key and its value serialised together) may
	// take up to MaxSQLitePairBytes.
	SQLiteBacked Backend = iota
	// KeyValueBacked is the storage of a class declared with
	// new_classes: State.SQL fails with the platform's words
	// (ErrNotSQLiteBacked), keys are at most MaxKeyBytes and values at
	// most MaxValueBytes serialised.
	KeyValueBacked
)

// String returns "sqlite" or "key-value", the words of the YAML's
// namespace backend.
func (b Backend) String() string {
	switch b {
	case SQLiteBacked:
		return "sqlite"
	case KeyValueBacked:
		return "key-value"
	}
	return fmt.Sprintf("Backend(%d)", uint8(b))
}

// MaxSQLitePairBytes is the most a key and its value serialised may take
// together in a SQLite-backed object's key-value storage: "Key + value
// size: 2 MB" on the platform's Durable Objects limits page
// (developers.cloudflare.com/durable-objects/platform/limits), counted as
// the SQL row it is stored in (the 2,000,000 bytes the SQL limits give a
// row, SQLMaxValueBytes). A key alone is bounded only by it.
const MaxSQLitePairBytes = 2_000_000

// ErrNotSQLiteBacked is wrapped by every SQL operation of a
// key-value-backed object, whose message is the platform's: "This Durable
// Object is not backed by SQLite storage, so the SQL API is not
// available." (real workerd 1.20261117.1, ctx.storage.sql of a class
// without enableSql).
var ErrNotSQLiteBacked = errors.New("This Durable Object is not backed by SQLite storage, so the SQL API is not available. SQL can be enabled on a new Durable Object class by using the `new_sqlite_classes` instead of `new_classes` under `[[migrations]]` in your wrangler.toml, but an already-deployed class cannot be converted to SQLite (except by deleting the existing data).") //lint:ignore ST1005 the platform's words, quoted

// NewKeyValueStorage returns an empty key-value-backed storage (see
// KeyValueBacked), for tests of an object's code without a runtime;
// NewStorage returns a SQLite-backed one.
func NewKeyValueStorage() *Storage {
	s := NewStorage()
	s.kv = true
	return s
}

// Backend returns the storage's backend.
func (s *Storage) Backend() Backend {
	if s.kv {
		return KeyValueBacked
	}
	return SQLiteBacked
}

// checkKey refuses a key too long for the storage's backend, with the
// platform's message: longer than MaxKeyBytes (key-value-backed) or than
// MaxSQLitePairBytes (SQLite-backed). Any other key is a key, the empty
// one too (as on the platform).
func (s *Storage) checkKey(op, key string) error {
	max := MaxSQLitePairBytes
	if s.kv {
		max = MaxKeyBytes
	}
	if len(key) > max {
		msg := fmt.Sprintf("Keys cannot be larger than %d bytes. A key of size %d was provided.", max, len(key))
		return fmt.Errorf("%w: %s %s: %s", ErrStorage, op, shortKey(key), msg)
	}
	return nil
}

// copyIn copies value for storing under key and checks its size for the
// storage's backend.
func (s *Storage) copyIn(op, key string, value any) (any, error) {
	cp, err := copyValue(op, key, value)
	if err != nil {
		return nil, err
	}
	if s.kv {
		err = checkSize(op, key, cp)
	} else {
		err = checkPairSize(op, key, cp)
	}
	if err != nil {
		return nil, err
	}
	return cp, nil
}

// checkPairSize refuses a key and a value (already copied) larger than
// MaxSQLitePairBytes together, the limit of a SQLite-backed object. The
// platform's words for it are not observable locally (workerd stores
// more); these follow the key-value-backed ones.
func checkPairSize(op, key string, v any) error {
	room := MaxSQLitePairBytes - len(key)
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64,
		float32, float64, time.Duration, time.Time:
		if room >= 11 {
			return nil
		}
	case string:
		if len(x)+16 <= room {
			return nil
		}
	}
	if n := serialisedSize(v); n > room {
		msg := fmt.Sprintf("A key and its value cannot be larger than %d bytes together. A key of size %d and a value of size %d were provided.", MaxSQLitePairBytes, len(key), n)
		return fmt.Errorf("%w: %s %s: %s", ErrStorage, op, shortKey(key), msg)
	}
	return nil
}
