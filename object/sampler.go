package object

// Sample is an example call of a method: the arguments to call it with,
// and the storage the object starts from (nil: empty). The arguments are
// what a scenario file would give: strings, numbers, lists, maps, or
// values of the method's own parameter types.
type Sample struct {
	Args    []any
	Storage map[string]any
}

// Sampler is implemented by a class whose objects say which arguments to
// try per method when a tool calls a method on its own: dosim verify (the
// idempotency check of each method), and amplify's loop when no --args is
// given. VerifySamples maps a method name (as in Methods) to a sample
// call. It is optional: a method with parameters that has no sample must
// be given its arguments (dosim verify --args 'METHOD=[...]'); a method
// without parameters needs none.
//
//	func (w *Wallet) VerifySamples() map[string]object.Sample {
//		return map[string]object.Sample{
//			"Deposit": {Args: []any{"tx-1", 50}},
//			"Balance": {Storage: map[string]any{"balance": 50}},
//		}
//	}
//
// The tool builds an instance with a bare State to ask it, so
// VerifySamples must not depend on the object's storage.
type Sampler interface {
	VerifySamples() map[string]Sample
}
