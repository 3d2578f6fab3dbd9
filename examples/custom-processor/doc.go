// Command custom-processor shows the core of framewire in one file: a
// custom processor in a pipeline, run by a task, watched by an observer.
//
//	go run ./examples/custom-processor
package main
