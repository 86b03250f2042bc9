// Package house holds no code: its tests keep the project's layout honest.
//
// TestRulesTableIsComplete reads docs/rules.md and checks that every rule
// of the specification (S1-S15, O1-O6, A1-A7, D1-D3, L1-L8, Q1-Q5, U1-U4,
// H1-H2, C1-C11) has exactly one row, that each file and function a row names is
// declared where it says, and that each test a row names exists. A row
// may say "planned (issue N)" instead, for a rule not built yet.
//
// TestImportEdges lists every import between the module's own packages
// and compares it with an explicit list: each package has a rank, a
// package imports only packages ranked below it, and a new edge, an
// upward edge or a list entry that no longer matches the code fails the
// test with a message saying what to do.
//
// TestSeamsAreTyped keeps packages from wiring each other through
// variables: every package-level variable of internal/wire is an error
// sentinel (no func-, any- or interface-typed hook waits there), and no
// func init() assigns to, changes or takes the address of another
// package's variable, or calls a function of another of the module's
// packages. Packages meet through typed seams instead: the stub and the
// runtime through the stub.Conn interface the runtime implements; object
// and runtime through what the package that owns a type exports, sealed by
// internal/seal.
package house
