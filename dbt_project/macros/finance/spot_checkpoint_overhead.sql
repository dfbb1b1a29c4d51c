{#-
    The share of extra wall-clock hours a checkpointed job needs on spot capacity (Young 1974, as in
    the gpu-metrics reference §7.3), from the monthly reclaim probability f (a fraction) of one node:
        λ_node = −ln(1 − f) / 730,  λ = nodes × λ_node,  M = 1 / λ,  τ* = √(2·δ·M)
        overhead = δ / τ* + λ · (τ* / 2 + R)
    δ = checkpoint write hours, R = restart hours, nodes = nodes that must all survive. A ratio, not
    money, so floating point is fine here. 0 when f is 0 (no interruptions, no checkpoints needed).
-#}
{% macro spot_checkpoint_overhead(reclaim_fraction, checkpoint_hours, restart_hours, nodes) -%}
    case
        when {{ reclaim_fraction }} <= 0 then 0.0
        else
            {{ checkpoint_hours }} / sqrt(
                2.0 * {{ checkpoint_hours }} / ({{ nodes }} * -ln(1.0 - {{ reclaim_fraction }}) / 730.0)
            )
            + ({{ nodes }} * -ln(1.0 - {{ reclaim_fraction }}) / 730.0) * (
                sqrt(2.0 * {{ checkpoint_hours }} / ({{ nodes }} * -ln(1.0 - {{ reclaim_fraction }}) / 730.0)) / 2.0
                + {{ restart_hours }}
            )
    end
{%- endmacro %}
