package invoke

import (
	"context"
	"runtime/debug"
)

// The direct path calls the commonest method shapes without reflection:
// reflect.Value.Call allocates its argument and result frames and is most
// of the cost of a fault-free call. A method qualifies when its signature
// is one of those below and every argument already has its parameter's
// type; anything else (another shape, a JSON number for an int) goes
// through Args and Call. Both paths give the same result.

// Direct reports whether args can be passed to the method as they are,
// without reflection.
func (f Func) Direct(args []any) bool {
	switch f.raw.(type) {
	case func(context.Context) error, func(context.Context) (int, error), func(context.Context) (string, error),
		func(context.Context) (bool, error), func(context.Context) (any, error):
		return len(args) == 0
	case func(context.Context, string) error, func(context.Context, string) (int, error),
		func(context.Context, string) (string, error), func(context.Context, string) (bool, error),
		func(context.Context, string) (any, error):
		return len(args) == 1 && isString(args[0])
	case func(context.Context, int) error, func(context.Context, int) (int, error):
		return len(args) == 1 && isInt(args[0])
	case func(context.Context, string, int) error, func(context.Context, string, int) (int, error):
		return len(args) == 2 && isString(args[0]) && isInt(args[1])
	case func(context.Context, string, string) error, func(context.Context, string, string) (string, error):
		return len(args) == 2 && isString(args[0]) && isString(args[1])
	}
	return false
}

func isString(v any) bool { _, ok := v.(string); return ok }
func isInt(v any) bool    { _, ok := v.(int); return ok }

// CallDirect calls the method with args, for which Direct returned true.
// A panic is returned as a *Panic.
func (f Func) CallDirect(ctx context.Context, args []any) (result any, err error) {
	// One return here, the many in callDirect: the defer stays open-coded
	// (cheap), which it is not in a function with many returns.
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, &Panic{Value: r, Stack: debug.Stack()}
		}
	}()
	return f.callDirect(ctx, args)
}

// callDirect is CallDirect without the recovery.
func (f Func) callDirect(ctx context.Context, args []any) (any, error) {
	switch fn := f.raw.(type) {
	case func(context.Context) error:
		return nil, fn(ctx)
	case func(context.Context) (int, error):
		return result2(fn(ctx))
	case func(context.Context) (string, error):
		return result2(fn(ctx))
	case func(context.Context) (bool, error):
		return result2(fn(ctx))
	case func(context.Context) (any, error):
		return fn(ctx)
	case func(context.Context, string) error:
		return nil, fn(ctx, args[0].(string))
	case func(context.Context, string) (int, error):
		return result2(fn(ctx, args[0].(string)))
	case func(context.Context, string) (string, error):
		return result2(fn(ctx, args[0].(string)))
	case func(context.Context, string) (bool, error):
		return result2(fn(ctx, args[0].(string)))
	case func(context.Context, string) (any, error):
		return fn(ctx, args[0].(string))
	case func(context.Context, int) error:
		return nil, fn(ctx, args[0].(int))
	case func(context.Context, int) (int, error):
		return result2(fn(ctx, args[0].(int)))
	case func(context.Context, string, int) error:
		return nil, fn(ctx, args[0].(string), args[1].(int))
	case func(context.Context, string, int) (int, error):
		return result2(fn(ctx, args[0].(string), args[1].(int)))
	case func(context.Context, string, string) error:
		return nil, fn(ctx, args[0].(string), args[1].(string))
	case func(context.Context, string, string) (string, error):
		return result2(fn(ctx, args[0].(string), args[1].(string)))
	}
	panic("invoke: CallDirect without Direct") // unreachable: callers check Direct
}

// result2 boxes a typed result as Call does: the value is returned even
// with an error, as reflection would return it.
func result2[T any](v T, err error) (any, error) { return v, err }
