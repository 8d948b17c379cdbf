package cli

// rootExample is `cargoship --help`'s Example: the path from a definition
// to a cluster, each command with its own page of examples.
const rootExample = "  cargoship create example/k3s/v1.35.3-k3s1 -o build/\n" +
	"  cargoship apply build/cargoship-rancher-k3s-multi-1.35.3-k3s1.tar.zst -c cluster.yaml --dry-run\n" +
	"  cargoship apply build/cargoship-rancher-k3s-multi-1.35.3-k3s1.tar.zst -c cluster.yaml --confirm\n" +
	"  cargoship reset -c cluster.yaml --target-hosts kw1 --dry-run"
