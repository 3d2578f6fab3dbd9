package frames

// Block allocates values of T a block at a time, for a goroutine that makes
// frames at a steady rate, such as an audio source that pushes one every
// 20 ms. It is not safe for concurrent use: each goroutine keeps its own.
//
// The bytes allocated are the same as with one allocation per frame; what
// changes is how often the goroutine allocates. While the garbage
// collector marks, a goroutine that allocates must first help it (an
// assist of at least 64 KB of scan work), so on a server with a hundred
// sessions, a hundred goroutines that allocate every 20 ms all assist at
// the start of every mark phase: a burst of tens of milliseconds of CPU
// that makes every session's 20 ms output ticks late. With a block per
// second, few of them allocate during a mark phase of 100 ms.
//
// A value stays alive as long as any value of its block does: a
// processor that keeps one frame keeps its block.
type Block[T any] struct {
	// N is how many values each allocation makes. Default: 50, a second
	// of 20 ms frames.
	N    int
	rest []T
}

// New returns a pointer to a zero T.
func (b *Block[T]) New() *T {
	if len(b.rest) == 0 {
		n := b.N
		if n <= 0 {
			n = 50
		}
		b.rest = make([]T, n)
	}
	v := &b.rest[0]
	b.rest = b.rest[1:]
	return v
}

// ByteBlock hands out byte slices (audio samples) cut from larger
// allocations, for the same reason as [Block]. It is not safe for
// concurrent use.
type ByteBlock struct {
	// Size is the size of each allocation in bytes; a request larger than
	// Size gets an allocation of its own size. Default: 32,000, a second
	// of 16 kHz mono 16-bit audio.
	Size int
	rest []byte
}

// Take returns n zero bytes. The slice's capacity is n, so appending to
// it copies instead of writing into the next slice's bytes.
func (b *ByteBlock) Take(n int) []byte {
	if len(b.rest) < n {
		size := b.Size
		if size <= 0 {
			size = 32000
		}
		b.rest = make([]byte, max(size, n))
	}
	p := b.rest[:n:n]
	b.rest = b.rest[n:]
	return p
}
