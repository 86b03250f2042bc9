package stub_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// web echoes what a fetch brought, and stores the path it saw.
type web struct{ st *object.State }

func (w *web) Methods() object.Methods { return object.Methods{} }

func (w *web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	_ = w.st.Storage().Put(r.Context(), "path", r.URL.Path)
	for k, vs := range r.Header {
		for _, v := range vs {
			rw.Header().Add("X-Echo-"+k, v)
		}
	}
	if len(body) > 0 && body[0] == '!' {
		panic("a handler that panics")
	}
	rw.WriteHeader(200 + len(body)%400)
	fmt.Fprintf(rw, "%s %s %d", r.Method, r.URL.Path, len(body))
}

// FuzzStubFetch sends odd requests (any method, path, query, header and
// body, through ambiguous-delivery faults and retries) with Stub.Fetch to
// an object's ServeHTTP (rules S4, S11): nothing panics, an invalid
// request is an error, and one seed gives the same answer twice.
func FuzzStubFetch(f *testing.F) {
	f.Add("GET", "/a?b=c", "X-Y", "z", []byte(""), uint8(0))
	f.Add("POST", "/%zz", "", "", []byte("!boom"), uint8(3))
	f.Add("PUT\x00", "//x/../y", "Bad Header", "v\r\nw", []byte{0xff, 0}, uint8(7))
	f.Add("", "", "Content-Length", "-1", bytes.Repeat([]byte("a"), 300), uint8(255))
	f.Fuzz(func(t *testing.T, method, path, hk, hv string, body []byte, faults uint8) {
		a := fetchOnce(method, path, hk, hv, body, faults)
		if b := fetchOnce(method, path, hk, hv, body, faults); a != b {
			t.Fatalf("one seed, two answers:\n%s\n---\n%s", a, b)
		}
	})
}

// fetchOnce sends one request on a fresh runtime and describes the answer.
func fetchOnce(method, path, hk, hv string, body []byte, faults uint8) string {
	rates := transport.Rates{transport.LoseRequest: float64(faults%4) / 10, transport.LoseResponse: float64(faults/4%4) / 10}
	rt := runtime.New(runtime.WithSeed(uint64(faults)), runtime.WithFaults(transport.Random(rates)))
	defer rt.Close()
	ns := rt.Namespace("WEB", func(st *object.State) object.Object { return &web{st: st} })
	s, err := ns.Get(ns.IDFromName("w"))
	if err != nil {
		return "get: " + err.Error()
	}
	req := &http.Request{Method: method, URL: &url.URL{Scheme: "https", Host: "w", Path: path}, Header: http.Header{}}
	if u, err := url.Parse("https://w" + path); err == nil && strings.HasPrefix(path, "/") {
		req.URL = u
	}
	if hk != "" {
		req.Header[hk] = []string{hv}
	}
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	var out strings.Builder
	err = rt.Run(func(ctx context.Context) error {
		resp, err := s.Fetch(ctx, req.WithContext(ctx))
		if err != nil {
			fmt.Fprintf(&out, "error %v\n", err)
			return nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Fprintf(&out, "%d %q %v\n", resp.StatusCode, b, resp.Header)
		return nil
	})
	if err != nil {
		fmt.Fprintf(&out, "run: %v\n", err)
	}
	fmt.Fprintf(&out, "storage %v calls %d\n", ns.Storage(ns.IDFromName("w")).Snapshot(), len(rt.Calls()))
	return out.String()
}
