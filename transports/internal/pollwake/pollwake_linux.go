//go:build linux

package pollwake

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Constants of timerfd_create(2).
const (
	clockMonotonic = 1
	tfdNonblock    = syscall.O_NONBLOCK
	tfdCloexec     = syscall.O_CLOEXEC
)

// itimerspec is the kernel's struct itimerspec.
type itimerspec struct {
	interval, value syscall.Timespec
}

// New returns a ticker that ticks every period.
func New(period time.Duration) (*Ticker, error) {
	if period <= 0 {
		return nil, fmt.Errorf("pollwake: period %v is not positive", period)
	}
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil, fmt.Errorf("pollwake: timerfd_create: %w", errno)
	}
	ts := syscall.NsecToTimespec(int64(period))
	spec := itimerspec{interval: ts, value: ts}
	if _, _, errno := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0); errno != 0 {
		syscall.Close(int(fd))
		return nil, fmt.Errorf("pollwake: timerfd_settime: %w", errno)
	}
	// A non-blocking descriptor makes os.NewFile register it with the
	// network poller.
	return &Ticker{f: os.NewFile(fd, "pollwake-timerfd")}, nil
}

// Wait blocks until the next tick and returns how many ticks have passed
// since the last Wait returned (more than one if the goroutine was late).
// After Close it returns an error wrapping os.ErrClosed.
func (t *Ticker) Wait() (uint64, error) {
	var b [8]byte
	n, err := t.f.Read(b[:])
	if err != nil {
		return 0, err
	}
	if n != len(b) {
		return 0, fmt.Errorf("pollwake: short read of %d bytes from the timerfd", n)
	}
	return binary.NativeEndian.Uint64(b[:]), nil
}
