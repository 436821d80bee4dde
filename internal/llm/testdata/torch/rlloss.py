#!/usr/bin/python3
"""Golden values of the RL loss and its gradient, by PyTorch autograd.

Run with Debian's python3 and python3-torch:

    /usr/bin/python3 internal/llm/testdata/torch/rlloss.py

It writes rlloss/golden.json: one small job (trajectory groups with rewards,
each trajectory one or more tokenised sequences packed into rows, with
assistant masks, sampler log-probabilities, some unknown, and the current
policy's log-probabilities) and, for each experimental_config combination, the
loss of every row and d loss / d logprob at every position.

The loss is written from the definition of the training API reference (the
section "The RL loss and what each experimental_config field does"), in
float64 tensors, and differentiated by autograd:

  group advantages   A_i = r_i - mean(r), / (population std + 1e-6) if scale_rewards;
                     trajectories with A_i == 0 are dropped
  weights            w = 1 / (assistant tokens of the trajectory + 1e-6)
  normalisation      over every assistant position of the job: w /= mean(w);
                     advantage_balance; A /= mean(|A| w)
  per token          delta = l - l_old (l_old unknown => detach(l)),
                     ratio by importance_sampling_level, min(ratio, M),
                     mask_prob_ratio, A -= tau detach(delta), PPO or CISPO
  row loss           sum(L w m) / (sum(m) + 1e-6)
"""

import json
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_default_dtype(torch.float64)
GEN = torch.Generator().manual_seed(14)


def rand(n, lo, hi):
    return (lo + (hi - lo) * torch.rand(n, generator=GEN)).tolist()


def make_job():
    """Three groups: the third has equal rewards and is dropped whole."""
    rewards = [[1.0, 0.0, 0.5], [0.2, 0.9], [0.7, 0.7]]
    groups = []
    row = 0
    for g, rs in enumerate(rewards):
        trajs = []
        for i, r in enumerate(rs):
            seqs = []
            # the second trajectory of each group has an additional history
            for h in range(2 if i == 1 else 1):
                n = 5 + int(torch.randint(0, 5, (1,), generator=GEN))
                mask = [False, False] + [bool(b) for b in (torch.rand(n - 2, generator=GEN) < 0.7).tolist()]
                if not any(mask):
                    mask[-1] = True
                old = rand(n, -3.0, -0.05)
                new = [o + d for o, d in zip(old, rand(n, -0.9, 0.9))]
                for t in range(n):
                    if not mask[t] or torch.rand(1, generator=GEN).item() < 0.2:
                        old[t] = None  # unknown: NaN
                seqs.append({"row": row % 2, "mask": mask, "old_logprob": old, "new_logprob": new})
                row += 1
            trajs.append({"reward": r, "sequences": seqs})
        groups.append({"trajectories": trajs})
    return groups


def group_advantages(rewards, scale):
    r = torch.tensor(rewards)
    a = r - r.mean()
    if scale:
        a = a / (r.std(unbiased=False) + 1e-6)
    return a.tolist()


def build_rows(groups, cfg):
    """The packed rows: flat tensors per row, as the trainer assembles them."""
    rows = [dict(mask=[], old=[], new=[], adv=[], w=[], seq=[]) for _ in range(2)]
    seq_id = 0
    for g in groups:
        advs = group_advantages([t["reward"] for t in g["trajectories"]], cfg.get("scale_rewards", True))
        for t, a in zip(g["trajectories"], advs):
            if a == 0:
                seq_id += len(t["sequences"])
                continue
            w = 1.0 / (sum(sum(s["mask"]) for s in t["sequences"]) + 1e-6)
            for s in t["sequences"]:
                r = rows[s["row"]]
                r["mask"] += s["mask"]
                r["old"] += [math.nan if o is None else o for o in s["old_logprob"]]
                r["new"] += s["new_logprob"]
                r["adv"] += [a] * len(s["mask"])
                r["w"] += [w] * len(s["mask"])
                r["seq"] += [seq_id] * len(s["mask"])
                seq_id += 1
    out = []
    for r in rows:
        out.append(dict(mask=torch.tensor(r["mask"], dtype=torch.bool), old=torch.tensor(r["old"]),
                        new=torch.tensor(r["new"]), adv=torch.tensor(r["adv"]), w=torch.tensor(r["w"]),
                        seq=torch.tensor(r["seq"])))
    # batch normalisation over every assistant position of the job
    m = torch.cat([r["mask"] for r in out])
    w = torch.cat([r["w"] for r in out])[m]
    mean_w = w.mean()
    b = cfg.get("advantage_balance", 0.0)
    for r in out:
        r["w"] = torch.where(r["mask"], r["w"] / mean_w, r["w"])
        a = r["adv"]
        if b > 0:
            a = torch.where(r["mask"] & (a < 0), a * (1 - b), a)
        elif b < 0:
            a = torch.where(r["mask"] & (a > 0), a * (1 + b), a)
        r["adv"] = a
    mean_aw = torch.cat([(r["adv"].abs() * r["w"])[r["mask"]] for r in out]).mean()
    for r in out:
        r["adv"] = torch.where(r["mask"], r["adv"] / mean_aw, r["adv"])
    return out


def row_loss(r, cfg):
    new = r["new"].clone().requires_grad_(True)
    mask = r["mask"].to(torch.float64)
    old = r["old"]
    if cfg.get("precalculate_logprobs"):
        old = new.detach().clone()  # the pre-update policy's log-probabilities
    old = torch.where(torch.isnan(old), new.detach(), old)
    delta = new - old
    ratio = torch.exp(delta)
    level = cfg.get("importance_sampling_level", "token")
    if level != "token":
        seq_ratio = torch.ones_like(ratio)
        for s in r["seq"].unique():
            sel = (r["seq"] == s) & r["mask"]
            if sel.any():
                seq_ratio = torch.where(sel, torch.exp(delta[sel].mean()), seq_ratio)
        if level == "sequence":
            ratio = seq_ratio
        elif level == "average":
            ratio = (ratio + seq_ratio) / 2
        elif level == "geometric_average":
            ratio = ratio**0.5 * seq_ratio**0.5
    ppo = cfg.get("ppo", False)
    eps = cfg.get("epsilon", 0.2 if ppo else 1.0)
    eps_high = cfg.get("epsilon_high", eps if ppo else 4.0)
    if "max_negative_advantage_importance_sampling_weight" in cfg:
        ratio = torch.clamp(ratio, max=cfg["max_negative_advantage_importance_sampling_weight"])
    if cfg.get("mask_prob_ratio"):
        ratio = torch.where((ratio > 1 - eps) & (ratio < 1 + eps_high), ratio, 0.0)
    adv = r["adv"]
    if "variant_k2_tau" in cfg:
        adv = adv - cfg["variant_k2_tau"] * delta.detach()
    if ppo:
        loss = -torch.min(ratio * adv, torch.clip(ratio, 1 - eps, 1 + eps_high) * adv)
    else:
        loss = -(torch.clip(ratio.detach(), 1 - eps, 1 + eps_high) * adv * new)
    total = (loss * r["w"] * mask).sum() / (mask.sum() + 1e-6)
    total.backward()
    return total.item(), new.grad.tolist()


CASES = [
    ("cispo-default", {}),
    ("cispo-no-scale-rewards", {"scale_rewards": False}),
    ("cispo-balance-positive", {"advantage_balance": 0.5}),
    ("cispo-balance-negative", {"advantage_balance": -0.25}),
    ("cispo-epsilon", {"epsilon": 0.3}),
    ("cispo-epsilon-high", {"epsilon": 0.3, "epsilon_high": 0.4}),
    ("cispo-sequence", {"importance_sampling_level": "sequence", "epsilon": 0.3, "epsilon_high": 0.3}),
    ("cispo-average", {"importance_sampling_level": "average", "epsilon": 0.3, "epsilon_high": 0.3}),
    ("cispo-geometric", {"importance_sampling_level": "geometric_average", "epsilon": 0.3, "epsilon_high": 0.3}),
    ("cispo-max-weight", {"max_negative_advantage_importance_sampling_weight": 1.1}),
    ("cispo-mask-prob-ratio", {"mask_prob_ratio": True, "epsilon": 0.5, "epsilon_high": 0.5}),
    ("cispo-k2-tau", {"variant_k2_tau": 0.7}),
    ("cispo-precalculate", {"precalculate_logprobs": True}),
    ("ppo-default", {"ppo": True}),
    ("ppo-epsilon-high", {"ppo": True, "epsilon": 0.1, "epsilon_high": 0.3}),
    ("ppo-sequence", {"ppo": True, "importance_sampling_level": "sequence"}),
    ("ppo-average", {"ppo": True, "importance_sampling_level": "average"}),
    ("ppo-geometric", {"ppo": True, "importance_sampling_level": "geometric_average"}),
    ("ppo-max-weight", {"ppo": True, "max_negative_advantage_importance_sampling_weight": 1.05}),
    ("ppo-mask-prob-ratio", {"ppo": True, "mask_prob_ratio": True}),
    ("ppo-k2-tau", {"ppo": True, "variant_k2_tau": 0.5}),
    ("ppo-precalculate", {"ppo": True, "precalculate_logprobs": True}),
    ("ppo-balance-sequence-mask", {"ppo": True, "advantage_balance": 0.3, "importance_sampling_level": "sequence",
                                   "mask_prob_ratio": True, "epsilon": 0.4, "variant_k2_tau": 0.2,
                                   "scale_rewards": False}),
    ("cispo-everything", {"advantage_balance": -0.6, "importance_sampling_level": "geometric_average",
                          "max_negative_advantage_importance_sampling_weight": 1.3, "mask_prob_ratio": True,
                          "epsilon": 0.6, "epsilon_high": 0.5, "variant_k2_tau": 0.3}),
]


def main():
    groups = make_job()
    cases = []
    for name, cfg in CASES:
        rows = []
        for r in build_rows(groups, cfg):
            loss, grad = row_loss(r, cfg)
            rows.append({"loss": loss, "grad": grad})
        cases.append({"name": name, "config": cfg, "rows": rows})
    out = os.path.join(HERE, "rlloss", "golden.json")
    with open(out, "w") as f:
        json.dump({"groups": groups, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
