// Package rtcpreport sends the RTCP reports of RFC 3550 §6.4 for a pion
// API's peer connections: sender reports for the streams each one sends
// (packet and octet counts, the RTP time of now) and receiver reports for
// the streams it receives (losses, the extended highest sequence number,
// interarrival jitter, and the times that answer the sender's reports).
//
// It takes the place of pion's report interceptors, for two reasons. The
// receiver side of those parses every packet's header into a new
// rtp.Header kept in a new attributes map, two allocations per packet;
// this one reads the sequence number and timestamp in place, so media
// flows without allocating. And those run two ticker goroutines per peer
// connection; here one goroutine per Reports sends every connection's
// reports, each as one compound packet, while there is a connection.
package rtcpreport

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
)

// Register adds RTCP reports to an interceptor registry: every peer
// connection of the pion API built with it sends its reports and answers
// its peer's, all from one goroutine.
func Register(ir *interceptor.Registry) { ir.Add(&Reports{}) }

// Reports is the interceptor factory: register one with a pion API's
// interceptor.Registry. Its zero value sends reports every second.
type Reports struct {
	// Interval between two reports on each stream. Default: 1 s.
	Interval time.Duration
	// Now is the clock, for tests. Default: time.Now.
	Now func() time.Time

	mu      sync.Mutex
	peers   map[*reporter]struct{} // those with an RTCP writer
	stop    chan struct{}          // of the running loop, nil when none runs
	stopped chan struct{}
}

// NewInterceptor implements interceptor.Factory.
func (f *Reports) NewInterceptor(string) (interceptor.Interceptor, error) {
	now := f.Now
	if now == nil {
		now = time.Now
	}
	return &reporter{f: f, now: now, recv: map[uint32]*stream{}}, nil
}

func (f *Reports) interval() time.Duration {
	if f.Interval <= 0 {
		return time.Second
	}
	return f.Interval
}

// add starts reporting on r, and the loop with the first connection.
func (f *Reports) add(r *reporter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.peers == nil {
		f.peers = map[*reporter]struct{}{}
	}
	f.peers[r] = struct{}{}
	if f.stop == nil {
		f.stop, f.stopped = make(chan struct{}), make(chan struct{})
		go f.loop(f.stop, f.stopped)
	}
}

// remove stops reporting on r; after the last connection it stops the
// loop and waits for it, so no goroutine outlives the connections.
func (f *Reports) remove(r *reporter) {
	f.mu.Lock()
	if _, ok := f.peers[r]; !ok {
		f.mu.Unlock()
		return
	}
	delete(f.peers, r)
	var stop, stopped chan struct{}
	if len(f.peers) == 0 {
		stop, stopped = f.stop, f.stopped
		f.stop, f.stopped = nil, nil
	}
	f.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

func (f *Reports) loop(stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	t := time.NewTicker(f.interval())
	defer t.Stop()
	var due []*reporter
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		f.mu.Lock()
		due = due[:0]
		for r := range f.peers {
			due = append(due, r)
		}
		f.mu.Unlock()
		for _, r := range due {
			r.send()
		}
		clear(due) // let closed connections go
	}
}

// reporter is the interceptor of one peer connection.
type reporter struct {
	interceptor.NoOp
	f   *Reports
	now func() time.Time

	mu     sync.Mutex
	writer interceptor.RTCPWriter
	sent   []*sentStream      // the streams the connection sends
	recv   map[uint32]*stream // the streams it receives, by the sender's SSRC
	closed bool
}

// BindRTCPWriter starts reporting on the connection through w.
func (r *reporter) BindRTCPWriter(w interceptor.RTCPWriter) interceptor.RTCPWriter {
	r.mu.Lock()
	ok := r.writer == nil && !r.closed
	if ok {
		r.writer = w
	}
	r.mu.Unlock()
	if ok {
		r.f.add(r)
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

// BindLocalStream counts the packets of a stream the connection sends.
func (r *reporter) BindLocalStream(info *interceptor.StreamInfo, writer interceptor.RTPWriter) interceptor.RTPWriter {
	st := &sentStream{ssrc: info.SSRC, clockRate: float64(info.ClockRate)}
	r.mu.Lock()
	r.sent = append(r.sent, st)
	r.mu.Unlock()
	return interceptor.RTPWriterFunc(func(h *rtp.Header, payload []byte, a interceptor.Attributes) (int, error) {
		st.sent(r.now(), h.Timestamp, len(payload))
		return writer.Write(h, payload, a)
	})
}

// UnbindLocalStream stops reporting on a stream the connection sent.
func (r *reporter) UnbindLocalStream(info *interceptor.StreamInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, st := range r.sent {
		if st.ssrc == info.SSRC {
			r.sent = append(r.sent[:i], r.sent[i+1:]...)
			return
		}
	}
}

// BindRemoteStream counts the packets of a stream as they are read.
func (r *reporter) BindRemoteStream(info *interceptor.StreamInfo, reader interceptor.RTPReader) interceptor.RTPReader {
	st := &stream{ssrc: info.SSRC, reporter: rand.Uint32(), clockRate: float64(info.ClockRate)}
	r.mu.Lock()
	r.recv[info.SSRC] = st
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
	delete(r.recv, info.SSRC)
	r.mu.Unlock()
}

// Close stops reporting on the connection.
func (r *reporter) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.f.remove(r)
	return nil
}

// send writes the connection's reports, senders' first, as one compound
// packet.
func (r *reporter) send() {
	now := r.now()
	r.mu.Lock()
	w := r.writer
	var pkts []rtcp.Packet
	for _, st := range r.sent {
		if sr, ok := st.report(now); ok {
			pkts = append(pkts, sr)
		}
	}
	for _, st := range r.recv {
		if rr, ok := st.report(now); ok {
			pkts = append(pkts, rr)
		}
	}
	r.mu.Unlock()
	if w == nil || len(pkts) == 0 {
		return
	}
	// An error means the connection is closing, and Close follows.
	_, _ = w.Write(pkts, interceptor.Attributes{})
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
			st := r.recv[ssrc]
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

// sentStream holds what a sender report says of one sent stream.
type sentStream struct {
	ssrc      uint32
	clockRate float64

	mu      sync.Mutex
	packets uint32
	octets  uint32
	lastTS  uint32    // the timestamp of the latest packet
	lastAt  time.Time // when it was sent
}

func (s *sentStream) sent(now time.Time, ts uint32, payload int) {
	s.mu.Lock()
	s.packets++
	s.octets += uint32(payload)
	s.lastTS, s.lastAt = ts, now
	s.mu.Unlock()
}

// report returns the stream's sender report at now, false before its
// first packet. Its RTP time is the latest packet's, advanced by the time
// since on the stream's clock.
func (s *sentStream) report(now time.Time) (*rtcp.SenderReport, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.packets == 0 {
		return nil, false
	}
	return &rtcp.SenderReport{
		SSRC:        s.ssrc,
		NTPTime:     ntpTime(now),
		RTPTime:     s.lastTS + uint32(now.Sub(s.lastAt).Seconds()*s.clockRate),
		PacketCount: s.packets,
		OctetCount:  s.octets,
	}, true
}

// ntpTime is t in the 64-bit NTP format: seconds since 1900 in the high
// 32 bits, the fraction of a second in the low 32.
func ntpTime(t time.Time) uint64 {
	const unixToNTP = 2208988800
	secs := uint64(t.Unix() + unixToNTP)
	frac := uint64(t.Nanosecond()) << 32 / 1e9
	return secs<<32 | frac
}
