// Package rtcpreport sends RTCP receiver reports (RFC 3550 §6.4.2) for the
// RTP streams a peer connection receives: losses, the extended highest
// sequence number, interarrival jitter and the round-trip fields that
// answer the sender's reports.
//
// It takes the place of pion's report.ReceiverInterceptor on the receive
// path, which parses every packet's header into a new rtp.Header kept in a
// new attributes map: two allocations per packet, 50 a second per stream.
// This one reads the sequence number and timestamp from the fixed header
// in place, so receiving media allocates nothing.
package rtcpreport

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/report"
	"github.com/pion/rtcp"
)

// Register adds RTCP reports to a peer connection's interceptors: pion's
// sender reports for the streams it sends, and this package's receiver
// reports for the streams it receives.
func Register(ir *interceptor.Registry) error {
	sender, err := report.NewSenderInterceptor()
	if err != nil {
		return err
	}
	ir.Add(sender)
	ir.Add(Factory{})
	return nil
}

// Factory makes the interceptor of each peer connection; register it with
// an interceptor.Registry.
type Factory struct {
	// Interval between two reports on each stream. Default: 1 s.
	Interval time.Duration
	// Now is the clock, for tests. Default: time.Now.
	Now func() time.Time
}

// NewInterceptor implements interceptor.Factory.
func (f Factory) NewInterceptor(string) (interceptor.Interceptor, error) {
	r := &reporter{interval: f.Interval, now: f.Now, streams: map[uint32]*stream{}, stop: make(chan struct{})}
	if r.interval <= 0 {
		r.interval = time.Second
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r, nil
}

// reporter is the interceptor of one peer connection.
type reporter struct {
	interceptor.NoOp
	interval time.Duration
	now      func() time.Time

	mu      sync.Mutex
	streams map[uint32]*stream // by the sender's SSRC
	running bool
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// BindRTCPWriter starts sending reports through w.
func (r *reporter) BindRTCPWriter(w interceptor.RTCPWriter) interceptor.RTCPWriter {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running && !r.closed {
		r.running = true
		r.wg.Add(1)
		go r.loop(w)
	}
	return w
}

// BindRTCPReader watches incoming sender reports, whose times the
// receiver reports echo so the sender can measure the round trip.
func (r *reporter) BindRTCPReader(reader interceptor.RTCPReader) interceptor.RTCPReader {
	return interceptor.RTCPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, a, err := reader.Read(b, a)
		if err == nil {
			r.senderReports(b[:n])
		}
		return n, a, err
	})
}

// BindRemoteStream counts the packets of a stream as they are read.
func (r *reporter) BindRemoteStream(info *interceptor.StreamInfo, reader interceptor.RTPReader) interceptor.RTPReader {
	st := &stream{ssrc: info.SSRC, reporter: rand.Uint32(), clockRate: float64(info.ClockRate)}
	r.mu.Lock()
	r.streams[info.SSRC] = st
	r.mu.Unlock()
	return interceptor.RTPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		n, a, err := reader.Read(b, a)
		if err == nil && n >= 12 && b[0]>>6 == 2 {
			st.received(r.now(), binary.BigEndian.Uint16(b[2:4]), binary.BigEndian.Uint32(b[4:8]))
		}
		return n, a, err
	})
}

// UnbindRemoteStream stops reporting on a stream.
func (r *reporter) UnbindRemoteStream(info *interceptor.StreamInfo) {
	r.mu.Lock()
	delete(r.streams, info.SSRC)
	r.mu.Unlock()
}

// Close stops the reports and waits for the goroutine that sends them.
func (r *reporter) Close() error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.stop)
	}
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}

func (r *reporter) loop(w interceptor.RTCPWriter) {
	defer r.wg.Done()
	t := time.NewTicker(r.interval)
	defer t.Stop()
	var due []*stream
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		r.mu.Lock()
		due = due[:0]
		for _, st := range r.streams {
			due = append(due, st)
		}
		r.mu.Unlock()
		now := r.now()
		for _, st := range due {
			rr, ok := st.report(now)
			if !ok {
				continue
			}
			if _, err := w.Write([]rtcp.Packet{rr}, interceptor.Attributes{}); err != nil {
				// The connection is closing; Close stops the loop.
				continue
			}
		}
	}
}

// senderReports records the sender reports in a compound RTCP packet.
func (r *reporter) senderReports(b []byte) {
	now := time.Time{}
	for len(b) >= 4 {
		size := 4 * (int(binary.BigEndian.Uint16(b[2:4])) + 1)
		if b[0]>>6 != 2 || size > len(b) {
			return // malformed: pion's own parsing reports it
		}
		const typeSenderReport, senderReportMin = 200, 28
		if b[1] == typeSenderReport && size >= senderReportMin {
			ssrc := binary.BigEndian.Uint32(b[4:8])
			middle := binary.BigEndian.Uint32(b[10:14]) // the middle 32 bits of the 64-bit NTP time
			r.mu.Lock()
			st := r.streams[ssrc]
			r.mu.Unlock()
			if st != nil {
				if now.IsZero() {
					now = r.now()
				}
				st.senderReport(now, middle)
			}
		}
		b = b[size:]
	}
}

// RFC 3550 appendix A.1: how far a sequence number may jump and still
// belong to the stream, forwards and backwards.
const (
	maxDropout  = 3000
	maxMisorder = 100
	seqMod      = 1 << 16
)

// stream holds one received stream's statistics, as RFC 3550 appendix A
// computes them.
type stream struct {
	ssrc      uint32 // the sender's
	reporter  uint32 // ours, as the source of the reports
	clockRate float64

	mu       sync.Mutex
	started  bool
	origin   time.Time // arrival of the first packet, for the jitter's clock
	baseSeq  uint32
	maxSeq   uint16
	cycles   uint32 // sequence number wraps, times 2^16
	badSeq   uint32 // a jump's next expected sequence number, or seqMod+1
	count    uint32 // packets received
	transit  uint32 // the last packet's arrival minus timestamp, in RTP units
	jitter   float64
	priorExp uint32 // expected and received at the previous report
	priorRec uint32
	lastSR   uint32 // the middle of the last sender report's NTP time
	lastSRAt time.Time
}

// received records a packet with sequence number seq and RTP timestamp ts
// that arrived at now.
func (s *stream) received(now time.Time, seq uint16, ts uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.started, s.origin = true, now
		s.restart(seq)
	} else {
		switch delta := seq - s.maxSeq; {
		case delta < maxDropout: // in order, perhaps with a gap
			if seq < s.maxSeq {
				s.cycles += seqMod
			}
			s.maxSeq = seq
		case delta <= seqMod-maxMisorder: // a big jump
			if uint32(seq) != s.badSeq {
				s.badSeq = (uint32(seq) + 1) & (seqMod - 1)
				return // wait for the next one to tell a restart from a stray
			}
			// Two packets in sequence after a jump: the sender restarted.
			s.restart(seq)
		default: // a duplicate or a late packet
		}
	}
	s.count++
	// Interarrival jitter (A.8), on the stream's RTP clock; unsigned
	// arithmetic keeps the difference right across timestamp wraps.
	arrival := uint32(uint64(now.Sub(s.origin).Seconds() * s.clockRate))
	transit := arrival - ts
	if s.count > 1 {
		d := float64(int32(transit - s.transit))
		if d < 0 {
			d = -d
		}
		s.jitter += (d - s.jitter) / 16
	}
	s.transit = transit
}

func (s *stream) restart(seq uint16) {
	s.baseSeq, s.maxSeq, s.cycles, s.badSeq = uint32(seq), seq, 0, seqMod+1
	s.count, s.priorExp, s.priorRec = 0, 0, 0
}

func (s *stream) senderReport(now time.Time, middle uint32) {
	s.mu.Lock()
	s.lastSR, s.lastSRAt = middle, now
	s.mu.Unlock()
}

// report returns the stream's receiver report at now, false before its
// first packet.
func (s *stream) report(now time.Time) (*rtcp.ReceiverReport, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return nil, false
	}
	extended := s.cycles + uint32(s.maxSeq)
	expected := extended - s.baseSeq + 1
	lost := int64(expected) - int64(s.count)
	// Duplicates can make the count exceed what was expected; the field
	// is 24 bits and pion writes it unsigned.
	lost = min(max(lost, 0), 0x7fffff)
	expInterval := expected - s.priorExp
	lostInterval := int64(expInterval) - int64(s.count-s.priorRec)
	s.priorExp, s.priorRec = expected, s.count
	var fraction uint8
	if expInterval > 0 && lostInterval > 0 {
		fraction = uint8(min(lostInterval<<8/int64(expInterval), 255))
	}
	var delay uint32
	if !s.lastSRAt.IsZero() {
		delay = uint32(now.Sub(s.lastSRAt).Seconds() * 65536)
	}
	return &rtcp.ReceiverReport{SSRC: s.reporter, Reports: []rtcp.ReceptionReport{{
		SSRC:               s.ssrc,
		FractionLost:       fraction,
		TotalLost:          uint32(lost),
		LastSequenceNumber: extended,
		Jitter:             uint32(s.jitter),
		LastSenderReport:   s.lastSR,
		Delay:              delay,
	}}}, true
}
