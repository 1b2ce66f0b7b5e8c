/* test_scenario_rules — the "0 = default" rules of the scenario written
 * once (sim_scenario.h): GPUs per node and the per-GPU NIC bandwidth. */
#include "sim_scenario.h"
#include "test_util.h"

static void case_gpus_per_node(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    CHECK(sc.hardware.gpus_per_node == SIM_DEFAULT_GPUS_PER_NODE);
    CHECK(sim_hardware_gpus_per_node(&sc.hardware) == 8);
    sc.hardware.gpus_per_node = 4;
    CHECK(sim_hardware_gpus_per_node(&sc.hardware) == 4);
    sc.hardware.gpus_per_node = 0;
    CHECK(sim_hardware_gpus_per_node(&sc.hardware) == 8);
    sc.hardware.gpus_per_node = -3;
    CHECK(sim_hardware_gpus_per_node(&sc.hardware) == 8);
}

static void case_nic(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.network.nic_gbps = 0;
    CHECK(sim_network_nic_Bps(&sc.network, 50e9) == 50e9);
    sc.network.nic_gbps = 400; /* Gb/s → bytes/s */
    CHECK(sim_network_nic_Bps(&sc.network, 50e9) == 400e9 / 8);
    sc.network.nic_gbps = -1;
    CHECK(sim_network_nic_Bps(&sc.network, 25e9) == 25e9);
}

static const test_case cases[] = {
    {"gpus_per_node", case_gpus_per_node},
    {"nic", case_nic},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_scenario_rules", cases);
}
