// Package framebook gives the runtime access to a frame's bookkeeping (its
// id and whether it has been pushed) without making that bookkeeping part
// of package frames' API: users build frames as struct literals and read
// their ids, but only the runtime stamps them and marks them pushed.
//
// Package frames fills in the functions at init; their argument is a
// frame's *frames.Base (f.FrameBase()), passed as any so that this package
// needs no import of frames. Boxing a pointer and asserting it back to its
// concrete type costs nothing measurable on the per-hop path.
package framebook

// MarkPushed records that the frame whose base is given has been pushed,
// stamps it with an id if it has none, and reports whether this was its
// first push. The first push happens on the goroutine that created the
// frame, before anyone else can see it, so it needs no synchronisation.
var MarkPushed func(base any) (first bool)

// Stamp gives the frame whose base is given an id unless it has one, and
// returns the id.
var Stamp func(base any) uint64
