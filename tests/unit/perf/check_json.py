#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_json.py SAMPLE DIR: run perf_json_sample, parse every document it writes with
Python's json module, and check perftest's keys (test_info, results) and the -a array."""
import json
import os
import subprocess
import sys

TEST_INFO = ["test", "Dual_port", "Device", "Number_of_qps", "Transport_type",
             "Connection_type", "Using_SRQ", "PCIe_relax_order", "ibv_wr_API", "Mtu",
             "Link_type", "rdma_cm_QPs", "Use_ROCm_memory", "Use_MUSA_memory",
             "Data_ex_method", "sluice_program", "sluice_pacer", "sluice_receiver",
             "sluice_rate_limit_bps"]
BW = ["MsgSize", "n_iterations", "BW_peak", "BW_average", "MsgRate"]
LAT = ["MsgSize", "n_iterations", "t_min", "t_max", "t_typical", "t_avg", "t_stdev",
       "percentile_99", "percentile_99.9"]
LAT_DUR = ["MsgSize", "n_iterations", "t_avg", "tps_average"]


def load(d, name):
    with open(os.path.join(d, name + ".json")) as f:
        doc = json.load(f)
    assert list(doc) == ["test_info", "results"], (name, list(doc))
    for k in TEST_INFO:
        assert k in doc["test_info"], (name, k)
    return doc


def keys(obj, want, name):
    assert list(obj) == want, (name, list(obj), want)


def main():
    sample, d = sys.argv[1], sys.argv[2]
    subprocess.run([sample, d], check=True)

    doc = load(d, "write_bw")
    assert doc["test_info"]["test"] == "RDMA_Write_BW_Test"
    assert doc["test_info"]["Device"] == 'host "one"'
    assert doc["test_info"]["sluice_rate_limit_bps"] == 1000000000
    keys(doc["results"], BW, "write_bw")
    assert doc["results"]["MsgSize"] == 2
    assert doc["results"]["BW_peak"] == round(1e6 / 1048576, 2)

    doc = load(d, "write_bw_sweep")
    res = doc["results"]
    assert isinstance(res, list) and len(res) == 23, len(res)
    assert [r["MsgSize"] for r in res] == [2 << i for i in range(23)]
    for r in res:
        keys(r, BW, "write_bw_sweep")
    assert res[0]["BW_average"] == 0.0072  # 0.9e6 B/s in Gb/s, six decimals under 0.1

    doc = load(d, "send_lat")
    assert doc["test_info"]["test"] == "Send_Latency_Test"
    assert doc["test_info"]["sluice_program"] == "dcqcn"
    assert doc["test_info"]["RX_depth"] == 16
    keys(doc["results"], LAT, "send_lat")
    assert doc["results"]["percentile_99.9"] == 9.9

    doc = load(d, "write_lat_dur")
    keys(doc["results"], LAT_DUR, "write_lat_dur")
    assert doc["results"]["tps_average"] == 153846.15

    doc = load(d, "read_bw_bidir")
    assert doc["test_info"]["test"] == "RDMA_Read_Bidirectional_BW_Test"
    assert doc["test_info"]["Number_of_qps"] == 8
    assert doc["test_info"]["Outstand_reads"] == 128
    print("perf json: 5 documents parsed")


if __name__ == "__main__":
    main()
