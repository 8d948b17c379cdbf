// Package v1alpha1 holds cargoship's two documents: the cluster inventory
// (kind Cluster, or the earlier tool's ZarfCluster) and the distro definition
// (kind ZarfDistro). It owns their types, defaults, strict loading with source
// positions, and validation. Nothing here touches a host or the network.
package v1alpha1
