{#-
    What moved each flagged GPU spend anomaly: the drivers as int_anomalies__drivers computes them once, for this mart
    and for the cause class and driver list of fct_gpu_spend_anomalies.
-#}

select * from {{ ref('int_anomalies__drivers') }}
