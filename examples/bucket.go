package examples

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dosim/dosim/object"
)

// Bucket is a tiny blob store reached with Stub.Fetch: it shows an object
// with a fetch handler. PUT /NAME stores the request body under NAME, GET
// /NAME returns it, DELETE /NAME removes it. Fetch handlers are never marked
// Retryable (rule S6); whether a failed fetch is retried depends on its body
// (rule S11): a body http.NewRequest can rewind (bytes, strings) is sent
// again, a streaming body (any other io.Reader) is sent once.
type Bucket struct {
	st *object.State
}

// NewBucket is the Bucket constructor for runtime.Namespace.
func NewBucket(st *object.State) object.Object { return &Bucket{st: st} }

var _ http.Handler = (*Bucket)(nil)

// Methods lists Bucket's RPC methods: its work is done by ServeHTTP.
func (b *Bucket) Methods() object.Methods {
	return object.Methods{
		"Size": object.Retryable(b.Size),
	}
}

// ServeHTTP serves GET, PUT and DELETE of one blob per path. The request's
// context is the simulation's: storage calls take it.
func (b *Bucket) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "" {
		http.Error(w, "a blob name is required: /NAME", http.StatusBadRequest)
		return
	}
	key := "blob/" + name
	switch r.Method {
	case http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := b.st.Storage().Put(ctx, key, string(body)); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "stored %d bytes as %s\n", len(body), name)
	case http.MethodGet:
		var body string
		found, err := b.st.Storage().Get(ctx, key, &body)
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		case !found:
			http.Error(w, name+" not found", http.StatusNotFound)
		default:
			io.WriteString(w, body)
		}
	case http.MethodDelete:
		if _, err := b.st.Storage().Delete(ctx, key); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, PUT, DELETE")
		http.Error(w, r.Method+" is not allowed: use GET, PUT or DELETE", http.StatusMethodNotAllowed)
	}
}

// Size returns how many blobs the bucket holds.
func (b *Bucket) Size(ctx context.Context) (int, error) {
	entries, err := b.st.Storage().List(ctx, object.ListOptions{Prefix: "blob/"})
	return len(entries), err
}
