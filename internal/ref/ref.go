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

// Mark, embedded in a type, makes it an Arriver whose arrival is what
// f(self) returns: the value that arrives in its place, and what it is,
// with its article ("a stub"). f is a plain function and self the value
// it is given, so that a Mark costs no allocation.
type Mark struct {
	self any
	f    func(self any) (any, string)
}

// NewMark returns the Mark whose arrival is f(self).
func NewMark(self any, f func(self any) (any, string)) Mark { return Mark{self: self, f: f} }

func (m Mark) arrive() (any, string) { return m.f(m.self) }

// Arrive returns what a arrives as, and what it is.
func Arrive(a Arriver) (arrived any, what string) { return a.arrive() }
