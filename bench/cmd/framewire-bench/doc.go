// Command framewire-bench runs the pipeline benchmark workloads of
// bench/WORKLOADS.md (W1 throughput, W2 latency, W3 interruption,
// W4 audio) exactly as written there, so the figures compare with other
// frameworks run on the same workloads. Each measurement runs in a fresh
// process; each cell is repeated three times and the median reported, as
// JSON lines on standard output.
//
//	go run ./bench/cmd/framewire-bench            # every cell
//	go run ./bench/cmd/framewire-bench -only W2   # one workload
package main
