package pollwake

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTickerTicksEveryPeriodAndCountsMissedTicks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("timerfd is Linux's")
	}
	tk, err := New(5 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer tk.Close()
	start := time.Now()
	var ticks uint64
	for ticks < 10 {
		n, err := tk.Wait()
		if err != nil {
			t.Fatal(err)
		}
		ticks += n
	}
	if d := time.Since(start); d < 45*time.Millisecond {
		t.Errorf("10 ticks of 5 ms took %v", d)
	}
	time.Sleep(30 * time.Millisecond) // miss about 6 ticks
	n, err := tk.Wait()
	if err != nil || n < 5 {
		t.Errorf("after 30 ms without waiting, Wait = %d, %v; want the ~6 ticks missed", n, err)
	}
}

func TestCloseEndsABlockedWait(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("timerfd is Linux's")
	}
	tk, err := New(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := tk.Wait(); done <- err }()
	time.Sleep(10 * time.Millisecond)
	if err := tk.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("Wait after Close = %v, want os.ErrClosed", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Close did not end a blocked Wait")
	}
}

func TestNewRejectsAPeriodThatIsNotPositive(t *testing.T) {
	if _, err := New(0); err == nil {
		t.Error("New(0) succeeded")
	}
}
