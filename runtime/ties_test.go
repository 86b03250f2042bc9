package runtime

import "testing"

// WithTieBytes: draw i of the kernel's source takes byte i as its top
// byte and the seed's draw for the rest; once the bytes run out, and
// without bytes, the draws are the seed's own (the bytes are
// prefix-stable, and the seed's source advances as it would).
func TestWithTieBytes_AreTheTopBytesOfTheKernelsDraws(t *testing.T) {
	plain := New(WithSeed(5))
	defer plain.Close()
	tied := New(WithSeed(5), WithTieBytes([]byte{0x01, 0xfe}))
	defer tied.Close()
	for i := range 6 {
		want, got := plain.k.Rand().Uint64(), tied.k.Rand().Uint64()
		switch i {
		case 0, 1:
			top := []uint64{0x01, 0xfe}[i]
			if got>>56 != top || got<<8>>8 != want>>8 {
				t.Errorf("draw %d is %#x, want top byte %#x and the seed's %#x below it", i, got, top, want>>8)
			}
		default:
			if got != want {
				t.Errorf("draw %d is %#x, past the bytes want the seed's %#x", i, got, want)
			}
		}
	}
	none := New(WithSeed(5), WithTieBytes(nil))
	defer none.Close()
	if none.k.Rand() != none.rng {
		t.Error("without bytes the kernel draws from the runtime's own source")
	}
}
