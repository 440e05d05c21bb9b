"""BuilderConfig: JSON merged call after call, every key the samples use accepted, bad keys and values named."""
import json

import magicmind.python.runtime as mm


def test_the_samples_keys_merge_key_by_key(tmp_path):
    config = mm.BuilderConfig()
    for text in ('{"precision_config": {"precision_mode": "force_float16"}}',
                 '{"precision_config": {"weight_quant_granularity": "per_axis"}}',
                 '{"archs": [{"mtp_372": [2, 6, 8]}]}', '{"graph_shape_mutable": true}',
                 '{"dim_range": {"0": {"min": [1, 3, 224, 224], "max": [32, 3, 224, 224]}}}',
                 '{"convert_input_layout": {"0": {"src": "NCHW", "dst": "NHWC"}}}',
                 '{"insert_bn_before_firstnode": {"0": {"mean": [1, 2, 3], "var": [1, 1, 1]}}}',
                 '{"opt_config": {"type64to32_conversion": true}}', '{"opt_config": {"conv_scale_fold": false}}',
                 '{"computation_preference": "fast"}', '{"debug_config": {"fusion_enable": false}}',
                 '{"custom_ranges": {"": {"max": [1], "min": [-1]}}}'):
        assert config.parse_from_string(text).ok(), text
    assert config.get("precision_config") == {"precision_mode": "force_float16", "activation_quant_algo": "symmetric",
                                              "weight_quant_granularity": "per_axis"}
    assert config.get("opt_config") == {"type64to32_conversion": True, "conv_scale_fold": False, "tfu_enable": True}
    assert config.mlu_archs == ["mtp_372"]
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"computation_preference": "high_precision"}))
    assert config.parse_from_file(str(path)).ok() and config.get("computation_preference") == "high_precision"
    config.mlu_archs = ["mtp_592"]
    assert config.mlu_archs == ["mtp_592"]


def test_bad_keys_and_values_are_named_and_change_nothing(tmp_path):
    config = mm.BuilderConfig()
    before = config.to_json()
    cases = {'{"precison_config": {}}': "precison_config",
             '{"precision_config": {"precision_mode": "int4"}}': "precision_config.precision_mode",
             '{"precision_config": {"mode": "force_float32"}}': "precision_config.mode",
             '{"archs": ["mtp_999"]}': "archs[0]", '{"graph_shape_mutable": "yes"}': "graph_shape_mutable",
             '{"dim_range": {"0": {"min": [4], "max": [2]}}}': "dim_range.0",
             '{"dim_range": {"x": {"min": [1], "max": [2]}}}': "dim_range",
             '{"convert_input_layout": {"0": {"src": "NCHW", "dst": "NCDHW"}}}': "convert_input_layout.0",
             '{"insert_bn_before_firstnode": {"0": {"mean": [1], "var": [0]}}}': "insert_bn_before_firstnode.0.var",
             '{"opt_config": {"fold": true}}': "opt_config.fold", '{"computation_preference": "turbo"}':
             "computation_preference", '{"debug_config": {"print_ir": {"print_level": 9}}}': "print_level",
             '{"custom_ranges": {"t": {"min": [2], "max": [1]}}}': "custom_ranges", "[1, 2]": "top level",
             "{not json": "not valid JSON"}
    for text, named in cases.items():
        status = config.parse_from_string(text)
        assert status.code() == mm.Code.INVALID_ARGUMENT and named in str(status), (text, status)
    assert config.to_json() == before
    assert config.parse_from_string(12).code() == mm.Code.INVALID_ARGUMENT
    assert config.parse_from_file(str(tmp_path / "missing.json")).code() == mm.Code.NOT_FOUND


def test_a_dim_range_of_another_rank_fails_the_build():
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([2, 3]))
    net.mark_output(net.add_i_activation_node(x, mm.IActivation.RELU).get_output(0))
    config = mm.BuilderConfig()
    assert config.parse_from_string('{"dim_range": {"0": {"min": [1], "max": [4]}}}').ok()
    builder = mm.Builder()
    assert builder.build_model("m", net, config) is None and "rank" in str(builder.last_status)
    config = mm.BuilderConfig()
    assert config.parse_from_string('{"dim_range": {"3": {"min": [1], "max": [4]}}}').ok()
    assert builder.build_model("m", net, config) is None and "1 inputs" in str(builder.last_status)
