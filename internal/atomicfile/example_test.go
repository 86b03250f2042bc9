package atomicfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dosim/dosim/internal/atomicfile"
)

// A summary is checked writable before the work, then written whole or
// not at all.
func Example() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "summary.json")
	if err := atomicfile.Check(path); err != nil {
		fmt.Println(err)
		return
	}
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, `{"complete": true}`)
		return err
	})
	data, _ := os.ReadFile(path)
	fmt.Println(err, string(data))
	// Output: <nil> {"complete": true}
}
