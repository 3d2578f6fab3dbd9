// Package natstest gives the tests of the packages that run over NATS
// (bus, the UI agent's bus adapters, cluster and its example) one way to
// get a server and to talk to it: an embedded nats-server/v2 for most
// tests, a real nats-server process that a test can stop and start again
// for the failure tests, connections as the tests and a deployment make
// them, and the test binary run again as a second OS process (a callee or
// a worker that a test kills with SIGKILL). It is for tests only.
package natstest
