package explore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"strings"

	"github.com/dosim/dosim/internal/atomicfile"
)

// artifactFiles are the names of the artifacts every report may write
// (Explorer.WriteArtifacts, FuncRun.WriteArtifacts): besides them, one
// linearizability-OBJECT.html per object whose history failed the check.
var artifactFiles = []string{"timeline.html", "timeline.txt", "trace.json", "violations.txt", "faults.yaml", "replay.txt"}

// ArtifactFile reports whether name (a base name, no folder) is one that
// writing a failing seed's artifacts may replace: an output of another
// kind must not be given that name in the artifacts' folder, or the
// artifacts overwrite it (dosim explore refuses --json DIR/timeline.html
// with --artifacts DIR).
func ArtifactFile(name string) bool {
	for _, f := range artifactFiles {
		if name == f {
			return true
		}
	}
	return strings.HasPrefix(name, linearizabilityPrefix) && strings.HasSuffix(name, ".html")
}

const (
	linearizabilityPrefix = "linearizability-"
	// maxObjectInName is the most bytes of an object's name an artifact's
	// file name keeps; 255 bytes is a file name's limit on most systems.
	maxObjectInName = 100
)

// linearizabilityFile names the artifact of object's history: a file name
// whatever the object is called. "NS/obj" becomes
// linearizability-NS-obj.html; a name holding anything but letters,
// digits, '.', '_', '-', '/' and ' ' (a NUL, a separator, terminal
// escapes), or longer than maxObjectInName bytes, keeps its safe bytes
// (cut to maxObjectInName) and gets a hash of the whole name, so that two
// objects never share a file.
func linearizabilityFile(object string) string {
	var b strings.Builder
	changed := len(object) > maxObjectInName
	for i := 0; i < len(object) && b.Len() < maxObjectInName; i++ {
		switch c := object[i]; {
		case c == '/':
			b.WriteByte('-')
		case c == ' ':
			b.WriteByte('_')
		case c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	if changed {
		sum := sha256.Sum256([]byte(object))
		b.WriteString("-" + hex.EncodeToString(sum[:4]))
	}
	return linearizabilityPrefix + b.String() + ".html"
}

// writeArtifact writes one artifact into dir, whole or not at all
// (package atomicfile): a failed write leaves a previous artifact of
// that name as it was. It returns the file's path.
func writeArtifact(dir, name string, data []byte) (string, error) {
	p := filepath.Join(dir, name)
	return p, atomicfile.Write(p, 0o644, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}
