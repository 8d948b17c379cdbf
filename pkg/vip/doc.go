// Package vip renders what puts a cluster's floating API address on its
// controllers when the provider is keepalived: the daemon's configuration
// and the health check it runs against the local API server (docs/ha.md).
// kube-vip's manifests are the engine's to render (pkg/engine), since they
// go where the engine's own manifests go.
package vip
