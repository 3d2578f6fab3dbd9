package rtcpreport

import (
	"encoding/binary"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// feed is the network side of a bound stream: each Read returns the next
// packet given to it.
type feed struct{ next []byte }

func (f *feed) Read(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
	return copy(b, f.next), a, nil
}

func rtpPacket(seq uint16, ts uint32) []byte {
	b := make([]byte, 12+3)
	b[0] = 2 << 6
	b[1] = 111
	binary.BigEndian.PutUint16(b[2:], seq)
	binary.BigEndian.PutUint32(b[4:], ts)
	binary.BigEndian.PutUint32(b[8:], 42)
	return b
}

func senderReport(ssrc uint32, ntp uint64) []byte {
	b, err := (&rtcp.SenderReport{SSRC: ssrc, NTPTime: ntp}).Marshal()
	if err != nil {
		panic(err)
	}
	return b
}

// receiver is one interceptor with a stream of SSRC 42 at 8 kHz bound.
type receiver struct {
	r    *reporter
	clk  *clock
	rtp  *feed
	read interceptor.RTPReader
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	clk := &clock{t: time.Unix(1000, 0)}
	i, err := (&Reports{Now: clk.now}).NewInterceptor("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = i.Close() })
	f := &feed{}
	read := i.BindRemoteStream(&interceptor.StreamInfo{SSRC: 42, ClockRate: 8000}, f)
	return &receiver{r: i.(*reporter), clk: clk, rtp: f, read: read}
}

// packet delivers one RTP packet, after advancing the clock by gap.
func (rc *receiver) packet(t *testing.T, gap time.Duration, seq uint16, ts uint32) {
	t.Helper()
	rc.clk.advance(gap)
	rc.rtp.next = rtpPacket(seq, ts)
	if _, _, err := rc.read.Read(make([]byte, 1500), nil); err != nil {
		t.Fatal(err)
	}
}

func (rc *receiver) report(t *testing.T) rtcp.ReceptionReport {
	t.Helper()
	rc.r.mu.Lock()
	st := rc.r.recv[42]
	rc.r.mu.Unlock()
	rr, ok := st.report(rc.clk.now())
	if !ok {
		t.Fatal("no report")
	}
	if rr.SSRC != st.reporter || len(rr.Reports) != 1 {
		t.Fatalf("report %+v: want one block from the stream's reporter SSRC", rr)
	}
	return rr.Reports[0]
}

const frame = 20 * time.Millisecond // 160 units at 8 kHz

func TestReportCountsLossesSinceTheStartAndSinceTheLastReport(t *testing.T) {
	rc := newReceiver(t)
	// 100 to 109 without 103 and 105, on time.
	for seq := uint16(100); seq < 110; seq++ {
		if seq != 103 && seq != 105 {
			rc.packet(t, frame, seq, uint32(seq)*160)
		} else {
			rc.clk.advance(frame)
		}
	}
	want := rtcp.ReceptionReport{SSRC: 42, FractionLost: 2 * 256 / 10, TotalLost: 2, LastSequenceNumber: 109}
	if diff := cmp.Diff(want, rc.report(t)); diff != "" {
		t.Errorf("first report (-want +got):\n%s", diff)
	}
	// Ten more, none lost: the fraction is of this interval only.
	for seq := uint16(110); seq < 120; seq++ {
		rc.packet(t, frame, seq, uint32(seq)*160)
	}
	want = rtcp.ReceptionReport{SSRC: 42, FractionLost: 0, TotalLost: 2, LastSequenceNumber: 119}
	if diff := cmp.Diff(want, rc.report(t)); diff != "" {
		t.Errorf("second report (-want +got):\n%s", diff)
	}
}

func TestReportExtendsTheSequenceNumberAcrossItsWrap(t *testing.T) {
	rc := newReceiver(t)
	for i, seq := range []uint16{65534, 65535, 0, 1} {
		rc.packet(t, frame, seq, uint32(i)*160)
	}
	got := rc.report(t)
	if got.LastSequenceNumber != 1<<16+1 || got.TotalLost != 0 {
		t.Errorf("after 65534..1: highest %d, lost %d; want %d and 0", got.LastSequenceNumber, got.TotalLost, 1<<16+1)
	}
}

func TestReportIgnoresDuplicatesAndLatePacketsForTheHighestSequence(t *testing.T) {
	rc := newReceiver(t)
	for i, seq := range []uint16{10, 11, 13, 12, 13, 14} {
		rc.packet(t, frame, seq, uint32(i)*160)
	}
	got := rc.report(t)
	// Five distinct packets and a duplicate, 10..14 expected: nothing lost.
	if got.LastSequenceNumber != 14 || got.TotalLost != 0 || got.FractionLost != 0 {
		t.Errorf("highest %d, lost %d, fraction %d; want 14, 0, 0", got.LastSequenceNumber, got.TotalLost, got.FractionLost)
	}
}

func TestReportFollowsASenderThatRestartsItsSequence(t *testing.T) {
	rc := newReceiver(t)
	rc.packet(t, frame, 100, 0)
	rc.packet(t, frame, 101, 160)
	// One stray far away is not believed; two in sequence are a restart.
	rc.packet(t, frame, 30000, 320)
	if got := rc.report(t); got.LastSequenceNumber != 101 {
		t.Errorf("after a stray: highest %d, want 101", got.LastSequenceNumber)
	}
	rc.packet(t, frame, 40000, 480)
	rc.packet(t, frame, 40001, 640)
	got := rc.report(t)
	if got.LastSequenceNumber != 40001 || got.TotalLost != 0 {
		t.Errorf("after a restart at 40000: highest %d, lost %d; want 40001 and 0", got.LastSequenceNumber, got.TotalLost)
	}
}

func TestReportEstimatesInterarrivalJitterOnTheRTPClock(t *testing.T) {
	rc := newReceiver(t)
	rc.packet(t, 0, 1, 0)
	rc.packet(t, frame+5*time.Millisecond, 2, 160) // 40 units late
	rc.packet(t, frame-5*time.Millisecond, 3, 320) // on time again
	// RFC 3550 A.8: J += (|D| - J)/16, twice with |D| = 40.
	j := 40.0 / 16
	j += (40 - j) / 16
	if got := rc.report(t).Jitter; got != uint32(j) {
		t.Errorf("jitter %d, want %d", got, uint32(j))
	}
}

func TestReportAnswersTheLastSenderReport(t *testing.T) {
	rc := newReceiver(t)
	rtcpIn := &feed{}
	reader := rc.r.BindRTCPReader(rtcpIn)
	rc.packet(t, frame, 1, 0)
	// A compound packet: a receiver report, then the sender report.
	rr, _ := (&rtcp.ReceiverReport{SSRC: 7}).Marshal()
	rtcpIn.next = append(rr, senderReport(42, 0x1122334455667788)...)
	if _, _, err := reader.Read(make([]byte, 1500), nil); err != nil {
		t.Fatal(err)
	}
	rc.clk.advance(500 * time.Millisecond)
	got := rc.report(t)
	if got.LastSenderReport != 0x33445566 || got.Delay != 65536/2 {
		t.Errorf("LSR %#x, DLSR %d; want 0x33445566 and %d (half a second)", got.LastSenderReport, got.Delay, 65536/2)
	}
}

func TestNoReportBeforeTheFirstPacket(t *testing.T) {
	rc := newReceiver(t)
	rc.r.mu.Lock()
	st := rc.r.recv[42]
	rc.r.mu.Unlock()
	if rr, ok := st.report(rc.clk.now()); ok {
		t.Errorf("report %+v before any packet", rr)
	}
}

// writer records the RTCP packets the interceptor sends.
type writer struct {
	mu   sync.Mutex
	sent []rtcp.Packet
}

func (w *writer) Write(pkts []rtcp.Packet, _ interceptor.Attributes) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sent = append(w.sent, pkts...)
	return 0, nil
}

func (w *writer) count() int { w.mu.Lock(); defer w.mu.Unlock(); return len(w.sent) }

func (w *writer) first() rtcp.Packet { w.mu.Lock(); defer w.mu.Unlock(); return w.sent[0] }

func TestSenderReportCountsWhatWasSentAndTellsTheRTPTimeOfNow(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 250_000_000)}
	i, err := (&Reports{Now: clk.now}).NewInterceptor("")
	if err != nil {
		t.Fatal(err)
	}
	defer i.Close()
	r := i.(*reporter)
	write := i.BindLocalStream(&interceptor.StreamInfo{SSRC: 9, ClockRate: 48000},
		interceptor.RTPWriterFunc(func(_ *rtp.Header, p []byte, _ interceptor.Attributes) (int, error) { return len(p), nil }))
	if _, ok := r.sent[0].report(clk.now()); ok {
		t.Error("a sender report before the first packet")
	}
	for k := range 3 {
		clk.advance(frame)
		if _, err := write.Write(&rtp.Header{Timestamp: 1000 + uint32(k)*960}, make([]byte, 10+k), nil); err != nil {
			t.Fatal(err)
		}
	}
	clk.advance(100 * time.Millisecond)
	sr, ok := r.sent[0].report(clk.now())
	if !ok {
		t.Fatal("no sender report")
	}
	want := &rtcp.SenderReport{
		SSRC: 9,
		// 1,700,000,000.41 s since 1970: 2,208,988,800 s more since 1900
		// (70 years, 17 of them leap), and 0.41 × 2^32 as the fraction.
		NTPTime:     (1_700_000_000+2_208_988_800)<<32 | 1_760_936_591,
		RTPTime:     1000 + 2*960 + 4800, // the last packet's, plus 100 ms at 48 kHz
		PacketCount: 3,
		OctetCount:  10 + 11 + 12,
	}
	if diff := cmp.Diff(want, sr); diff != "" {
		t.Errorf("sender report (-want +got):\n%s", diff)
	}
}

// reportLoops counts the goroutines running a Reports loop.
func reportLoops() int {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	return strings.Count(b.String(), "rtcpreport.(*Reports).loop")
}

func TestOneGoroutineSendsEveryConnectionsReportsWhileOneIsOpen(t *testing.T) {
	f := &Reports{Interval: 5 * time.Millisecond}
	var conns []interceptor.Interceptor
	var writers []*writer
	for range 10 {
		i, err := f.NewInterceptor("")
		if err != nil {
			t.Fatal(err)
		}
		feed := &feed{next: rtpPacket(1, 0)}
		read := i.BindRemoteStream(&interceptor.StreamInfo{SSRC: 42, ClockRate: 48000}, feed)
		w := &writer{}
		i.BindRTCPWriter(w)
		if _, _, err := read.Read(make([]byte, 1500), nil); err != nil {
			t.Fatal(err)
		}
		conns, writers = append(conns, i), append(writers, w)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, w := range writers {
		for w.count() < 3 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if w.count() < 3 {
			t.Fatalf("%d reports in 5 s at a 5 ms interval", w.count())
		}
	}
	// Every connection has had reports, so the loop has run.
	if n := reportLoops(); n != 1 {
		t.Errorf("%d report goroutines for 10 connections, want 1", n)
	}
	first := writers[0].first()
	if rr, ok := first.(*rtcp.ReceiverReport); !ok || len(rr.Reports) != 1 || rr.Reports[0].SSRC != 42 {
		t.Errorf("sent %v, want receiver reports on SSRC 42", first)
	}
	for _, c := range conns {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := conns[0].Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// The last Close waited for the loop to finish; its goroutine may
	// still be returning.
	for deadline := time.Now().Add(time.Second); reportLoops() != 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := reportLoops(); n != 0 {
		t.Errorf("%d report goroutines left after the last connection closed", n)
	}
	n := writers[0].count()
	time.Sleep(20 * time.Millisecond)
	if writers[0].count() != n {
		t.Error("reports after Close")
	}
}

func TestReadingAPacketAllocatesNothing(t *testing.T) {
	rc := newReceiver(t)
	rc.rtp.next = rtpPacket(1, 0)
	buf := make([]byte, 1500)
	if n := testing.AllocsPerRun(100, func() { _, _, _ = rc.read.Read(buf, nil) }); n != 0 {
		t.Errorf("%.1f allocations per packet, want 0", n)
	}
}

// FuzzReadRTCP feeds arbitrary RTCP from the network through the sender
// report reader: it must never panic, whatever the lengths say.
func FuzzReadRTCP(f *testing.F) {
	f.Add(senderReport(42, 1))
	rr, _ := (&rtcp.ReceiverReport{SSRC: 7}).Marshal()
	f.Add(append(rr, senderReport(42, 2)...))
	f.Add([]byte{0x80, 200, 0, 0})
	f.Add([]byte{0x80, 200, 0xff, 0xff, 0, 0, 0, 42})
	f.Fuzz(func(t *testing.T, b []byte) {
		rc := newReceiver(t)
		rc.r.senderReports(b)
		rc.packet(t, frame, 1, 0)
		rc.rtp.next = b
		_, _, _ = rc.read.Read(make([]byte, 1500), nil)
		rc.report(t)
	})
}
