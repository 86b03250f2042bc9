// Package ref marks the values that cross a call by reference and arrive
// on the other side as another value: a stub (rule S1: a stub that reaches
// an object as an argument or a result arrives as one of its own that never
// retries). Package object sits below package stub and cannot name its
// type; its copy policy knows such a value as an Arriver. Arriver's method
// is unexported, so only a type that embeds a Mark implements it: the
// compiler keeps it for dosim's packages, and a stub that embeds its Mark
// through an unexported name shows nothing of it in go doc.
package ref

// Arriver is implemented by a value that crosses a call by reference and
// arrives as another value (a type that embeds a Mark).
type Arriver interface {
	arrive() (arrived any, what string)
}

// Mark, embedded in a type, makes it an Arriver whose arrival is what f
// returns: the value that arrives in its place, and what it is, with its
// article ("a stub").
type Mark struct{ f func() (any, string) }

// NewMark returns the Mark whose arrival is f's.
func NewMark(f func() (any, string)) Mark { return Mark{f: f} }

func (m Mark) arrive() (any, string) { return m.f() }

// Arrive returns what a arrives as, and what it is.
func Arrive(a Arriver) (arrived any, what string) { return a.arrive() }
