{#-
    How steadily we use each kind of rented GPU, per provider × GPU model × region × billing currency: the usage profile
    as int_commitments__usage_profile computes it once, for this mart and for the commitment options priced on it
    (int_commitments__option_prices, fct_gpu_commitment_recommendations).
-#}

select * from {{ ref('int_commitments__usage_profile') }}
