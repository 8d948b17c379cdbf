package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/spf13/pflag"
)

// engineFlags switch on the apply phases that work on the running cluster
// (28 kubeconfig, 29 node labels). Only apply registers them: prepare
// stops before the engine, and their zero values turn both phases off.
type engineFlags struct {
	kubeconfigOut string
	labelNodes    bool
}

func (f *engineFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.kubeconfigOut, "kubeconfig-out", "", "after the apply, write the cluster's admin kubeconfig, pointed at the load balancer, to this file (0600); only when it changed")
	fl.BoolVar(&f.labelNodes, "label-nodes", false, "label each node node-role.kubernetes.io/<profile>=true with its host's profile")
}

// apply sets the phase options. A kubeconfig path that cannot be written
// is refused now rather than at the end of a long apply.
func (f *engineFlags) apply(o *node.Options) error {
	switch out := f.kubeconfigOut; {
	case out == "-":
		return errors.New("--kubeconfig-out -: apply prints its summary on stdout; name a file, or use `cargoship kube-config -o -`")
	case out != "":
		if fi, err := os.Stat(out); err == nil && fi.IsDir() {
			return fmt.Errorf("--kubeconfig-out %s is a directory; name the file to write", out)
		}
	}
	o.KubeconfigOut = f.kubeconfigOut
	o.LabelNodes = f.labelNodes
	return nil
}
