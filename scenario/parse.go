package scenario

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
	"go.yaml.in/yaml/v3"
)

// Limits on what a scenario may ask for.
const (
	// MaxFileSize is the largest scenario file Load and Parse accept.
	MaxFileSize = 1 << 20
	// MaxOuter is the largest application loop a call may have.
	MaxOuter = 100
	// MaxTime is the latest virtual time a call may be set at, and the
	// longest sleep or link delay.
	MaxTime = time.Hour
	// maxErrors is how many problems are reported per file.
	maxErrors = 20
)

// Outcomes lists the names of the call outcomes an expectation may name
// (rule D2), as transport.Outcomes defines them.
var Outcomes = func() []string {
	var names []string
	for _, o := range transport.Outcomes() {
		names = append(names, o.String())
	}
	return names
}()

// Load reads and parses the scenario file at path. The classes its
// namespaces may name are those the options register (WithClasses).
func Load(path string, opts ...Option) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("scenario: reading %s: %w", path, err)
	}
	return Parse(path, data, opts...)
}

// Parse parses a scenario. name is the file name used in messages and as
// the default scenario name; the classes its namespaces may name are those
// the options register (WithClasses). Every problem found is an *Error;
// the returned error is then an Errors.
func Parse(name string, data []byte, opts ...Option) (*Scenario, error) {
	p := &parser{file: name}
	for _, o := range opts {
		if o != nil {
			o.applyLoad(&p.cfg)
		}
	}
	s := p.parse(data)
	if p.more > 0 {
		p.errs = append(p.errs, &Error{File: name, Line: p.moreLine, Field: "file",
			Msg: fmt.Sprintf("... and %d more (only the first %d problems are listed; the next is on this line)", p.more, maxErrors)})
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return s, nil
}

// digest is "sha256:" and the hex SHA-256 of a scenario file's bytes.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// parser is one load of a file: YAML is decoded into typed structs
// (decode.go, decode_file.go, decode_expect.go), then one resolve pass
// (resolve.go, resolve_calls.go, expect.go) reports every problem and
// builds the Scenario.
type parser struct {
	file string
	cfg  loadConfig // the registered classes
	errs Errors
	// more counts the problems found past the first maxErrors, and
	// moreLine is where the first of them is.
	more, moreLine int
	s              *Scenario

	namespaces map[string]*Namespace
	stubs      map[string]*Stub
	objects    map[string]bool // object names of the stubs
	// Names defined with a problem already reported: references to them
	// report nothing more.
	brokenNS, brokenStubs map[string]bool
	// sockets are the WebSockets the fetches so far open (Fetch.WebSocket).
	sockets []string
}

// parse reads the YAML document, decodes it and resolves it.
func (p *parser) parse(data []byte) *Scenario {
	base := strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file))
	p.s = &Scenario{Name: base, File: p.file, Seed: runtime.DefaultSeed, Digest: digest(data)}
	p.namespaces, p.stubs, p.objects = map[string]*Namespace{}, map[string]*Stub{}, map[string]bool{}
	p.brokenNS, p.brokenStubs = map[string]bool{}, map[string]bool{}
	if len(data) > MaxFileSize {
		p.errorf(nil, "file", nil, "%d bytes: a scenario may be at most %d bytes", len(data), MaxFileSize)
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.errorf(nil, "file", nil, "empty: a scenario is a mapping with namespaces, stubs and calls (see docs/scenarios.md)")
		} else {
			p.syntaxError(err, data)
		}
		return nil
	}
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		p.errorf(&more, "file", nil, "a second YAML document: a scenario file holds one document")
		return nil
	} else if !errors.Is(err, io.EOF) {
		p.syntaxError(err, data)
		return nil
	}
	// Decoding the whole tree once bounds alias expansion (a "billion
	// laughs" file is refused here) before the walk below follows aliases.
	// (Type errors, such as a key given twice, are reported by the walk.)
	var probe any
	var typeErr *yaml.TypeError
	if err := doc.Decode(&probe); err != nil && !errors.As(err, &typeErr) {
		p.syntaxError(err, nil)
		return nil
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	p.resolveFile(decodeFile(root), root)
	return p.s
}
