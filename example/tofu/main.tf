# cargoship_cluster over the hosts of a cargoship inventory: the container
# fleet `go run ./hack/demo -keep` or `mage dev:fleetUp` leaves up, or your
# own. docs/provider.md says how to install the provider offline.
#
#   terraform init
#   SSH_KNOWN_HOSTS="" terraform apply \
#     -var inventory=../../build/fleet/demo/inventory.yaml \
#     -var package=$(ls ../../build/demo/cargoship-*.tar.zst)

terraform {
  required_providers {
    cargoship = {
      # registry.opentofu.org/colonel-byte/cargoship under OpenTofu,
      # registry.terraform.io/colonel-byte/cargoship under Terraform.
      source = "colonel-byte/cargoship"
    }
  }
}

variable "inventory" {
  description = "A cargoship inventory (kind: Cluster) whose hosts connect over ssh."
  type        = string
}

variable "package" {
  description = "The cargoship package (.tar.zst) to install."
  type        = string
}

locals {
  inventory = yamldecode(file(var.inventory))
}

provider "cargoship" {}

resource "cargoship_cluster" "this" {
  name          = local.inventory.metadata.name
  load_balancer = local.inventory.spec.config.loadbalancer
  package       = abspath(var.package)

  # Keyed by hostname: controllers run first, and the controller whose key
  # sorts first founds the cluster.
  hosts = {
    for h in local.inventory.spec.hosts : h.hostname => {
      address           = h.ssh.address
      port              = try(h.ssh.port, 22)
      user              = try(h.ssh.user, "root")
      key_path          = try(h.ssh.keyPath, null)
      host_key          = try(h.ssh.hostKey, null)
      hostname          = h.hostname
      private_address   = try(h.privateAddress, null)
      private_interface = try(h.privateInterface, null)
      role              = h.role
      profile           = try(h.profile, null)
    }
  }

  timeouts = {
    create = "30m"
    update = "30m"
    delete = "15m"
  }
}

output "nodes" {
  value = cargoship_cluster.this.nodes
}

output "version" {
  value = cargoship_cluster.this.version
}
