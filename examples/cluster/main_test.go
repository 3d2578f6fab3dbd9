package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// childEnv makes the test binary act as the cluster binary, so that the
// local command's children (os.Executable) are this binary too.
const childEnv = "FRAMEWIRE_CLUSTER_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}
