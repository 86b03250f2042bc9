package verify

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handler is a class that serves Stub.Fetch (http.Handler) and handles
// its alarm (object.Alarmer).
type handler struct{ st *object.State }

func (h *handler) Methods() object.Methods {
	return object.Methods{"Size": object.Func(func(ctx context.Context) (int, error) { return 0, nil })}
}
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request)       {}
func (h *handler) Alarm(ctx context.Context, info object.AlarmInfo) error { return nil }

// Rule C6: the instance the verifier's runtime builds is the class's own
// value, not a wrapper: the runtime finds its fetch handler and its alarm
// handler as it would anywhere (a wrapper hid both).
func TestC6_TheVerifiedInstanceIsTheClassItself(t *testing.T) {
	user := runtime.New()
	defer user.Close()
	ns := user.Namespace("H", func(st *object.State) object.Object { return &handler{st: st} })

	rt := runtime.New()
	defer rt.Close()
	inner := asItIs(rt, ns)
	id := inner.IDFromName("verify")
	_, err := inner.Methods(id) // builds the instance
	require.NoError(t, err)
	inst := inner.Instance(id)
	assert.Equal(t, reflect.TypeFor[*handler](), reflect.TypeOf(inst))
	_, isHandler := inst.(http.Handler)
	_, isAlarmer := inst.(object.Alarmer)
	assert.True(t, isHandler && isAlarmer, "its optional interfaces are kept")
}
