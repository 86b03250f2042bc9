// Package seal holds the key that keeps the runtime-only entry points of
// dosim's public packages for dosim's own packages.
//
// Package object exports one function that only dosim's packages call,
// object.Hosting, whose value's methods make an object's ID and State,
// drive its storage's journal and give the copy policy of arguments and
// results. It takes a Key as its parameter. A package
// outside this module cannot import an internal package, so it cannot name
// a Key nor build one: the compiler keeps those entry points for dosim, as
// protobuf's protoimpl keeps its constructors for generated code, while
// "go to definition" still follows every call.
package seal

// Key is the parameter of dosim's runtime-only entry points. Its zero
// value is the key: seal.Key{}. (Its one field is blank, so that a struct
// literal written in another package is never of its type.)
type Key struct{ _ struct{} }
