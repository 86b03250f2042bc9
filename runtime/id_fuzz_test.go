package runtime_test

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// FuzzIDFromString (rule O1): no text makes IDFromString panic; what it
// accepts is 64 hex digits of an id of its own namespace, given back as
// the same id; every refusal wraps ErrID and quotes the text; the id of a
// name round-trips through its String, keeping the name; and the same id
// is refused by another namespace, which names the owner.
func FuzzIDFromString(f *testing.F) {
	rt := runtime.New()
	a := rt.Namespace("A", nopObject)
	good := a.IDFromName("apple").String()
	for _, seed := range []struct{ ns, name, text string }{
		{"A", "apple", good},
		{"A", "", ""},
		{"INVENTORY", "apple", strings.ToUpper(good)},
		{"A", "x", good[:63]},
		{"A", "x", good + "0"},
		{"A", "x", " " + good},
		{"A", "x", strings.Repeat("0", 64)},
		{"A", "x", strings.Repeat("ab", 32)},
		{"A", "x", strings.Repeat("zz", 32)},
		{"é", "名前", "ünïcödé"},
		{"A", "\x00", "\x00"},
		{"TZ=UTC", "CRON_TZ=", "NaN"},
		{"A", strings.Repeat("long", 1000), "-1"},
		{"A", "x", "1e400"},
	} {
		f.Add(seed.ns, seed.name, seed.text)
	}
	f.Fuzz(func(t *testing.T, nsName, name, text string) {
		if nsName == "" || nsName == "OTHER" {
			nsName = "A"
		}
		rt := runtime.New()
		defer rt.Close()
		ns := rt.Namespace(nsName, nopObject)
		other := rt.Namespace("OTHER", nopObject)

		// The id of a name round-trips, and keeps its name.
		id := ns.IDFromName(name)
		back, err := ns.IDFromString(id.String())
		if err != nil {
			t.Fatalf("%s.IDFromString(IDFromName(%q).String()): %v", nsName, name, err)
		}
		if !back.Equal(id) || back.Name() != name || back.Namespace() != nsName {
			t.Fatalf("round trip of %q gave %q (name %q, namespace %q)", id.String(), back.String(), back.Name(), back.Namespace())
		}
		// Upper-case hex digits are the same id.
		if up, err := ns.IDFromString(strings.ToUpper(id.String())); err != nil || !up.Equal(id) {
			t.Fatalf("upper-case id refused or changed: %v", err)
		}
		// Another namespace refuses it and names the owner.
		_, err = other.IDFromString(id.String())
		if !errors.Is(err, runtime.ErrID) || !strings.Contains(err.Error(), "belongs to namespace "+strconv.Quote(nsName)) {
			t.Fatalf("OTHER.IDFromString of an id of %q: %v", nsName, err)
		}
		// A runtime that does not know the owner says "another namespace".
		rt2 := runtime.New()
		defer rt2.Close()
		stranger := rt2.Namespace("OTHER", nopObject)
		if _, err := stranger.IDFromString(id.String()); !errors.Is(err, runtime.ErrID) || !strings.Contains(err.Error(), "another namespace") {
			t.Fatalf("an id of an unknown namespace: %v", err)
		}

		// Any text: accepted only as this namespace's id, else ErrID.
		got, err := ns.IDFromString(text)
		if err != nil {
			if !errors.Is(err, runtime.ErrID) {
				t.Fatalf("IDFromString(%q): error does not wrap ErrID: %v", text, err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(text)) {
				t.Fatalf("IDFromString(%q): error does not quote the text: %v", text, err)
			}
			return
		}
		if b, herr := hex.DecodeString(text); herr != nil || len(b) != 32 {
			t.Fatalf("IDFromString accepted %q, which is not 64 hex digits", text)
		}
		if got.String() != strings.ToLower(text) || got.Namespace() != nsName || got.IsZero() {
			t.Fatalf("IDFromString(%q) = %q in namespace %q", text, got.String(), got.Namespace())
		}
		if _, err := other.IDFromString(text); !errors.Is(err, runtime.ErrID) {
			t.Fatalf("%q was accepted by %q and by OTHER", text, nsName)
		}
	})
}

// nopObject makes an object with no methods.
func nopObject(*object.State) object.Object { return nop{} }

// nop is an object with no methods.
type nop struct{}

func (nop) Methods() object.Methods { return nil }
