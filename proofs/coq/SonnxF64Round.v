(* sonnx-mul: the Coq lemmas behind the proofs of why3/f64_round.mlw's goals
   (proofs/coq/f64_round_*.v require this library): binary64's
   round-to-nearest-even of p * 2^e (Flocq's FLT_exp, subnormals included)
   computed with integers, the bounds of the rounded significand, the
   binary64 encoding of the result and its overflow test.  Checked by
   python -m sonnx_mul_assurance.why3.coq check: no hole, no axiom. *)
Require Import ZArith Reals Lia Psatz.
Require Import Flocq.Core.Core.
Require bv.Pow2int int.EuclideanDivision.
Require ieee_float.RoundingMode ieee_float.GenericFloat ieee_float.Float64.
Local Open Scope R_scope.

Definition rsig (p s : Z) : Z :=
  if (s <=? 0)%Z then (p * 2 ^ (- s))%Z
  else
    let q := (p / 2 ^ s)%Z in
    let r := (p mod 2 ^ s)%Z in
    if ((2 ^ (s - 1) <? r)%Z || ((r =? 2 ^ (s - 1))%Z && Z.odd q))%bool
    then (q + 1)%Z else q.

Lemma bpow_pos_IZR : forall k, (0 <= k)%Z -> bpow radix2 k = IZR (2 ^ k).
Proof.
intros k Hk. rewrite <- IZR_Zpower by exact Hk. reflexivity.
Qed.

Lemma mag_prod : forall p e n, (1 <= n)%Z -> (2 ^ (n - 1) <= p < 2 ^ n)%Z ->
  (mag radix2 (IZR p * bpow radix2 e) = n + e :> Z)%Z.
Proof.
intros p e n Hn Hp.
apply mag_unique_pos. split.
- replace (n + e - 1)%Z with ((n - 1) + e)%Z by ring. rewrite bpow_plus.
  apply Rmult_le_compat_r. apply bpow_ge_0.
  rewrite bpow_pos_IZR by lia. apply IZR_le. lia.
- rewrite bpow_plus. apply Rmult_lt_compat_r. apply bpow_gt_0.
  rewrite bpow_pos_IZR by lia. apply IZR_lt. lia.
Qed.

Lemma znearestE_split : forall q r d, (0 < d)%Z -> (0 <= r < d)%Z ->
  ZnearestE (IZR q + IZR r / IZR d) =
  if ((d <? 2 * r)%Z || ((2 * r =? d)%Z && Z.odd q))%bool then (q + 1)%Z else q.
Proof.
intros q r d Hd Hr.
assert (Hd' : 0 < IZR d) by (apply IZR_lt; lia).
assert (Hfl : Zfloor (IZR q + IZR r / IZR d) = q).
{ apply Zfloor_imp. split.
  - assert (0 <= IZR r / IZR d). { apply Rmult_le_pos. apply IZR_le; lia. left. apply Rinv_0_lt_compat. lra. } lra.
  - rewrite plus_IZR. apply Rplus_lt_compat_l.
    apply Rmult_lt_reg_r with (IZR d). lra. unfold Rdiv. rewrite Rmult_assoc, Rinv_l, Rmult_1_r, Rmult_1_l by lra. apply IZR_lt. lia. }
unfold Znearest. rewrite Hfl.
replace (IZR q + IZR r / IZR d - IZR q) with (IZR r / IZR d) by ring.
assert (Hc : Rcompare (IZR r / IZR d) (/ 2) = Z.compare (2 * r) d).
{ rewrite <- Rcompare_IZR.
  rewrite <- (Rcompare_mult_r (2 * IZR d)) by lra.
  f_equal; rewrite ?mult_IZR; field; apply Rgt_not_eq; exact Hd'. }
rewrite Hc.
destruct (Z.compare_spec (2 * r) d) as [E|L|G].
- (* tie *)
  assert (Hr0 : r <> 0%Z) by lia.
  assert (Hce : Zceil (IZR q + IZR r / IZR d) = (q + 1)%Z).
  { rewrite Zceil_floor_neq. rewrite Hfl. reflexivity. rewrite Hfl.
    intro H. assert (IZR r / IZR d = 0) by lra.
    assert (IZR r = 0). { apply Rmult_eq_reg_r with (/ IZR d). lra. apply Rgt_not_eq, Rlt_gt, Rinv_0_lt_compat; lra. } 
    apply eq_IZR in H1. lia. }
  rewrite Hce.
  replace (d <? 2 * r)%Z with false by (symmetry; apply Z.ltb_ge; lia).
  replace (2 * r =? d)%Z with true by (symmetry; apply Z.eqb_eq; lia).
  simpl. rewrite Z.negb_even. destruct (Z.odd q); reflexivity.
- replace (d <? 2 * r)%Z with false by (symmetry; apply Z.ltb_ge; lia).
  replace (2 * r =? d)%Z with false by (symmetry; apply Z.eqb_neq; lia).
  reflexivity.
- assert (Hce : Zceil (IZR q + IZR r / IZR d) = (q + 1)%Z).
  { rewrite Zceil_floor_neq. rewrite Hfl. reflexivity. rewrite Hfl.
    intro H. assert (IZR r / IZR d = 0) by lra.
    assert (IZR r = 0). { apply Rmult_eq_reg_r with (/ IZR d). lra. apply Rgt_not_eq, Rlt_gt, Rinv_0_lt_compat; lra. } 
    apply eq_IZR in H1. lia. }
  rewrite Hce.
  replace (d <? 2 * r)%Z with true by (symmetry; apply Z.ltb_lt; lia).
  reflexivity.
Qed.

Lemma rsig_pos : forall p s, (0 < s)%Z ->
  rsig p s = let q := (p / 2 ^ s)%Z in let r := (p mod 2 ^ s)%Z in
    if ((2 ^ s <? 2 * r)%Z || ((2 * r =? 2 ^ s)%Z && Z.odd q))%bool then (q + 1)%Z else q.
Proof.
intros p s Hs. unfold rsig.
replace (s <=? 0)%Z with false by (symmetry; apply Z.leb_gt; lia).
cbv zeta.
assert (H2 : (2 ^ s = 2 * 2 ^ (s - 1))%Z).
{ rewrite <- Z.pow_succ_r by lia. f_equal. lia. }
rewrite H2.
destruct (Z.ltb_spec (2 ^ (s - 1)) (p mod (2 * 2 ^ (s - 1))));
destruct (Z.ltb_spec (2 * 2 ^ (s - 1)) (2 * (p mod (2 * 2 ^ (s - 1)))));
destruct (Z.eqb_spec (p mod (2 * 2 ^ (s - 1))) (2 ^ (s - 1)));
destruct (Z.eqb_spec (2 * (p mod (2 * 2 ^ (s - 1)))) (2 * 2 ^ (s - 1)));
simpl; try reflexivity; lia.
Qed.

Lemma round_prod : forall p e n, (1 <= n)%Z -> (2 ^ (n - 1) <= p < 2 ^ n)%Z ->
  let s := Z.max (n - 53) (-1074 - e) in
  round radix2 (FLT_exp (-1074) 53) ZnearestE (IZR p * bpow radix2 e)
  = IZR (rsig p s) * bpow radix2 (e + s).
Proof.
intros p e n Hn Hp s.
unfold round, F2R, scaled_mantissa, cexp. simpl.
rewrite (mag_prod p e n Hn Hp).
replace (FLT_exp (-1074) 53 (n + e)) with (e + s)%Z by (unfold FLT_exp, s; lia).
f_equal. f_equal.
rewrite Rmult_assoc, <- bpow_plus.
replace (e + - (e + s))%Z with (- s)%Z by ring.
destruct (Z_le_gt_dec s 0) as [Hs|Hs].
- unfold rsig. replace (s <=? 0)%Z with true by (symmetry; apply Z.leb_le; lia).
  rewrite bpow_pos_IZR by lia. rewrite <- mult_IZR. apply (Zrnd_IZR ZnearestE).
- rewrite rsig_pos by lia. cbv zeta.
  assert (Hd : (0 < 2 ^ s)%Z) by (apply Z.pow_pos_nonneg; lia).
  rewrite bpow_opp, bpow_pos_IZR by lia.
  rewrite (Z.div_mod p (2 ^ s)) at 1 by lia.
  rewrite plus_IZR, mult_IZR.
  rewrite <- znearestE_split by (try apply Z.mod_pos_bound; lia).
  f_equal. field. apply Rgt_not_eq. apply IZR_lt. lia.
Qed.

Lemma rsig_bounds : forall p e n, (1 <= n)%Z -> (2 ^ (n - 1) <= p < 2 ^ n)%Z ->
  let s := Z.max (n - 53) (-1074 - e) in
  (0 <= rsig p s <= 2 ^ 53)%Z /\ ((-1074 < e + s)%Z -> (2 ^ 52 <= rsig p s)%Z).
Proof.
intros p e n Hn Hp s.
assert (Hs1 : (n - 53 <= s)%Z) by (unfold s; lia).
assert (Hp0 : (0 < p)%Z) by (assert (0 < 2 ^ (n - 1))%Z by (apply Z.pow_pos_nonneg; lia); lia).
unfold rsig.
destruct (Z.leb_spec s 0) as [Hs|Hs].
- assert (H53 : (2 ^ n * 2 ^ (- s) <= 2 ^ 53)%Z).
  { rewrite <- Z.pow_add_r by lia. apply Z.pow_le_mono_r; lia. }
  assert (Hpos : (0 < 2 ^ (- s))%Z) by (apply Z.pow_pos_nonneg; lia).
  split.
  + split. nia. nia.
  + intros Hc. assert (Hsn : s = (n - 53)%Z) by (unfold s in *; lia).
    assert (H52 : (2 ^ 52 = 2 ^ (n - 1) * 2 ^ (- s))%Z).
    { rewrite <- Z.pow_add_r by lia. f_equal. lia. }
    nia.
- cbv zeta.
  assert (Hd : (0 < 2 ^ s)%Z) by (apply Z.pow_pos_nonneg; lia).
  assert (Hq : (p / 2 ^ s < 2 ^ 53)%Z).
  { apply Z.div_lt_upper_bound. lia.
    apply Z.lt_le_trans with (2 ^ n)%Z. lia.
    rewrite <- Z.pow_add_r by lia. apply Z.pow_le_mono_r; lia. }
  assert (Hq0 : (0 <= p / 2 ^ s)%Z) by (apply Z.div_pos; lia).
  assert (Hlow : (-1074 < e + s)%Z -> (2 ^ 52 <= p / 2 ^ s)%Z).
  { intros Hc. assert (Hsn : s = (n - 53)%Z) by (unfold s in *; lia).
    apply Z.div_le_lower_bound. lia.
    rewrite <- Z.pow_add_r by lia. replace (s + 52)%Z with (n - 1)%Z by lia. lia. }
  destruct (_ || _)%bool; split; try split; try lia; intros Hc; specialize (Hlow Hc); lia.
Qed.

Definition bval (b : Z) : R :=
  if (b / 2 ^ 52 =? 0)%Z then IZR b * bpow radix2 (-1074)
  else IZR (2 ^ 52 + b mod 2 ^ 52) * bpow radix2 (b / 2 ^ 52 - 1075).

Lemma split52 : forall k m, (0 <= m < 2 ^ 52)%Z ->
  ((k * 2 ^ 52 + m) / 2 ^ 52 = k)%Z /\ ((k * 2 ^ 52 + m) mod 2 ^ 52 = m)%Z.
Proof.
intros k m Hm.
assert (P52 : (0 < 2 ^ 52)%Z) by (apply Z.pow_pos_nonneg; lia).
split.
- symmetry. apply Z.div_unique with m. lia. ring.
- symmetry. apply Z.mod_unique with k. lia. ring.
Qed.

Lemma bval_enc : forall q c, (0 <= q <= 2 ^ 53)%Z -> (-1074 <= c)%Z ->
  ((-1074 < c)%Z -> (2 ^ 52 <= q)%Z) ->
  bval ((c + 1074) * 2 ^ 52 + q) = IZR q * bpow radix2 c.
Proof.
intros q c Hq Hc Hn.
unfold bval.
assert (P52 : (0 < 2 ^ 52)%Z) by (apply Z.pow_pos_nonneg; lia).
destruct (Z_lt_le_dec q (2 ^ 52)) as [Hsub|Hnorm].
- assert (Hc' : c = (-1074)%Z) by (destruct (Z.eq_dec c (-1074)); [assumption | specialize (Hn ltac:(lia)); lia]).
  subst c. replace ((-1074 + 1074) * 2 ^ 52 + q)%Z with q by ring.
  rewrite Z.div_small by lia. simpl. reflexivity.
- destruct (Z.eq_dec q (2 ^ 53)) as [Htop|Hmid].
  + subst q.
    replace ((c + 1074) * 2 ^ 52 + 2 ^ 53)%Z with ((c + 1076) * 2 ^ 52 + 0)%Z
      by (replace (2 ^ 53)%Z with (2 * 2 ^ 52)%Z by reflexivity; ring).
    destruct (split52 (c + 1076) 0 ltac:(lia)) as [Hdv Hmd]. rewrite Hdv, Hmd.
    replace (c + 1076 =? 0)%Z with false by (symmetry; apply Z.eqb_neq; lia).
    replace (2 ^ 52 + 0)%Z with (2 ^ 52)%Z by ring.
    replace (c + 1076 - 1075)%Z with (c + 1)%Z by ring.
    rewrite bpow_plus. replace (2 ^ 53)%Z with (2 ^ 52 * 2)%Z by reflexivity.
    rewrite mult_IZR. simpl (bpow radix2 1). rewrite IZR_Zpower_pos. simpl. ring.
  + replace ((c + 1074) * 2 ^ 52 + q)%Z with ((c + 1075) * 2 ^ 52 + (q - 2 ^ 52))%Z by ring.
    assert (Hm : (0 <= q - 2 ^ 52 < 2 ^ 52)%Z).
    { split. lia. assert (2 ^ 53 = 2 * 2 ^ 52)%Z by reflexivity. lia. }
    destruct (split52 (c + 1075) (q - 2 ^ 52) Hm) as [Hdv Hmd]. rewrite Hdv, Hmd.
    replace (c + 1075 =? 0)%Z with false by (symmetry; apply Z.eqb_neq; lia).
    replace (2 ^ 52 + (q - 2 ^ 52))%Z with q by ring.
    replace (c + 1075 - 1075)%Z with c by ring. reflexivity.
Qed.

Lemma le_scale : forall a b c k, (0 <= k)%Z ->
  (IZR a * bpow radix2 c <= IZR b * bpow radix2 (c + k) <-> (a <= b * 2 ^ k)%Z).
Proof.
intros a b c k Hk.
rewrite bpow_plus, (bpow_pos_IZR k Hk).
replace (IZR b * (bpow radix2 c * IZR (2 ^ k))) with (IZR (b * 2 ^ k) * bpow radix2 c)
  by (rewrite mult_IZR; ring).
split; intro H.
- apply le_IZR. apply Rmult_le_reg_r with (bpow radix2 c). apply bpow_gt_0. exact H.
- apply Rmult_le_compat_r. apply bpow_ge_0. apply IZR_le. exact H.
Qed.

Lemma overflow_iff : forall q c, (0 <= q <= 2 ^ 53)%Z -> (-1074 <= c)%Z ->
  ((-1074 < c)%Z -> (2 ^ 52 <= q)%Z) ->
  (IZR q * bpow radix2 c <= IZR (2 ^ 53 - 1) * bpow radix2 971 <->
   ((c + 1074) * 2 ^ 52 + q < 2047 * 2 ^ 52)%Z).
Proof.
intros q c Hq Hc Hn.
assert (E53 : (2 ^ 53 = 2 * 2 ^ 52)%Z) by reflexivity.
assert (P52 : (0 < 2 ^ 52)%Z) by (apply Z.pow_pos_nonneg; lia).
destruct (Z_le_gt_dec c 971) as [Hle|Hgt].
- replace (bpow radix2 971) with (bpow radix2 (c + (971 - c))) by (f_equal; ring).
  rewrite le_scale by lia.
  destruct (Z.eq_dec c 971) as [->|Hne].
  + replace (971 - 971)%Z with 0%Z by ring. rewrite Z.pow_0_r, Z.mul_1_r.
    set (P := (2 ^ 52)%Z) in *. rewrite E53 in *. lia.
  + assert (Hk : (2 <= 2 ^ (971 - c))%Z).
    { replace 2%Z with (2 ^ 1)%Z at 1 by reflexivity. apply Z.pow_le_mono_r; lia. }
    set (K := (2 ^ (971 - c))%Z) in *. set (P := (2 ^ 52)%Z) in *. rewrite E53 in *.
    split; intros _.
    * assert (2 * P - 1 <= (2 * P - 1) * K)%Z by nia. lia.
    * lia.
- replace (bpow radix2 c) with (bpow radix2 (971 + (c - 971))) by (f_equal; ring).
  rewrite bpow_plus, (bpow_pos_IZR (c - 971)) by lia.
  assert (Hk : (2 <= 2 ^ (c - 971))%Z).
  { replace 2%Z with (2 ^ 1)%Z at 1 by reflexivity. apply Z.pow_le_mono_r; lia. }
  specialize (Hn ltac:(lia)).
  split; intro H.
  + exfalso.
    assert (H' : IZR (q * 2 ^ (c - 971)) * bpow radix2 971 <= IZR (2 ^ 53 - 1) * bpow radix2 971).
    { rewrite mult_IZR. lra. }
    apply Rmult_le_reg_r in H'. 2: apply bpow_gt_0.
    apply le_IZR in H'.
    set (K := (2 ^ (c - 971))%Z) in *. set (P := (2 ^ 52)%Z) in *. rewrite E53 in *.
    assert (2 * P <= q * K)%Z by nia. lia.
  + set (P := (2 ^ 52)%Z) in *. rewrite E53 in *. lia.
Qed.

(* Bridges from Why3's printed definitions (a parameter and its defining
   axiom, passed as hypotheses) to the functions above. *)

Lemma scaled_eq : forall scaled : Z -> Z -> R,
  (forall p e : Z,
    ((0 <= e)%Z -> scaled p e = IZR (p * bv.Pow2int.pow2 e))
    /\ (~ (0 <= e)%Z -> scaled p e = IZR p / IZR (bv.Pow2int.pow2 (- e)))) ->
  forall a b, scaled a b = IZR a * bpow radix2 b.
Proof.
intros scaled def a b. destruct (def a b) as [Hpos Hneg].
unfold bv.Pow2int.pow2 in *. rewrite !two_p_equiv in *.
destruct (Z_le_gt_dec 0 b) as [Hb|Hb].
- rewrite Hpos by exact Hb. rewrite mult_IZR, <- bpow_pos_IZR by exact Hb. reflexivity.
- rewrite Hneg by lia. rewrite <- bpow_pos_IZR by lia.
  rewrite bpow_opp. unfold Rdiv. rewrite Rinv_inv. reflexivity.
Qed.

Lemma round_sig_eq : forall (shift : Z -> Z -> Z) (round_sig : Z -> Z -> Z -> Z),
  (forall p e n : Z,
    let s := shift e n in
    ((s <= 0)%Z -> round_sig p e n = (p * bv.Pow2int.pow2 (- s))%Z) /\
    (~ (s <= 0)%Z ->
     let q := int.EuclideanDivision.div p (bv.Pow2int.pow2 s) in
     let r := int.EuclideanDivision.mod1 p (bv.Pow2int.pow2 s) in
     let h := bv.Pow2int.pow2 (s - 1) in
     ((h < r)%Z \/ r = h /\ int.EuclideanDivision.mod1 q 2 = 1%Z ->
      round_sig p e n = (q + 1)%Z) /\
     (~ ((h < r)%Z \/ r = h /\ int.EuclideanDivision.mod1 q 2 = 1%Z) ->
      round_sig p e n = q))) ->
  forall p e n, round_sig p e n = rsig p (shift e n).
Proof.
intros shift round_sig def p e n.
destruct (def p e n) as [Hle Hgt]. cbv zeta in Hle, Hgt.
unfold bv.Pow2int.pow2 in *. rewrite !two_p_equiv in *.
unfold rsig.
destruct (Z.leb_spec (shift e n) 0) as [Hs|Hs].
- apply Hle; exact Hs.
- assert (Hd : (0 < 2 ^ shift e n)%Z) by (apply Z.pow_pos_nonneg; lia).
  assert (Hdiv : forall x, int.EuclideanDivision.div x (2 ^ shift e n) = (x / 2 ^ shift e n)%Z).
  { intros x. unfold int.EuclideanDivision.div.
    destruct (Z_le_dec 0 (x mod 2 ^ shift e n)) as [_|H]. reflexivity.
    exfalso. apply H. apply Z.mod_pos_bound. lia. }
  assert (Hmod : forall x, int.EuclideanDivision.mod1 x (2 ^ shift e n) = (x mod 2 ^ shift e n)%Z).
  { intros x. unfold int.EuclideanDivision.mod1. rewrite Hdiv. rewrite Z.mod_eq by lia. reflexivity. }
  assert (Hodd : forall x, (int.EuclideanDivision.mod1 x 2 = 1)%Z <-> Z.odd x = true).
  { intros x. unfold int.EuclideanDivision.mod1, int.EuclideanDivision.div.
    destruct (Z_le_dec 0 (x mod 2)) as [_|H].
    - rewrite <- Z.mod_eq by lia. rewrite Zodd_mod. rewrite <- Zeq_is_eq_bool. tauto.
    - exfalso. apply H. apply Z.mod_pos_bound. lia. }
  cbv zeta. specialize (Hgt ltac:(lia)). rewrite !Hdiv, !Hmod in Hgt. destruct Hgt as [Hup Hdown].
  set (r := (p mod 2 ^ shift e n)%Z) in *. set (h := (2 ^ (shift e n - 1))%Z) in *.
  set (q := (p / 2 ^ shift e n)%Z) in *.
  destruct (Z.ltb_spec h r); destruct (Z.eqb_spec r h);
  destruct (Z.odd q) eqn:Ho; simpl;
  first [ exfalso; lia
        | apply Hup; first [ left; assumption | right; split; [assumption | apply Hodd; exact Ho] ]
        | apply Hdown; intros [H1|[H1 H2]]; [lia | first [lia | apply Hodd in H2; congruence]] ].
Qed.

Lemma pow2_bits : forall p n : Z, (0 < p)%Z ->
  (bv.Pow2int.pow2 (n - 1) <= p < bv.Pow2int.pow2 n)%Z ->
  (1 <= n)%Z /\ (2 ^ (n - 1) <= p < 2 ^ n)%Z.
Proof.
intros p n h1 [h2 h3].
unfold bv.Pow2int.pow2 in *. rewrite two_p_equiv in h2, h3.
split; [|lia].
destruct (Z_lt_le_dec 0 n) as [H|H]. lia.
assert (H0 : (2 ^ n <= 1)%Z).
{ destruct (Z.eq_dec n 0) as [->|H']. simpl; lia. rewrite Z.pow_neg_r by lia. lia. }
lia.
Qed.

Lemma f64_round : forall x,
  ieee_float.Float64.round ieee_float.RoundingMode.RNE x =
  round radix2 (FLT_exp (-1074) 53) ZnearestE x.
Proof.
intros x. reflexivity.
Qed.

Lemma ediv_pos : forall x y, (0 < y)%Z -> int.EuclideanDivision.div x y = (x / y)%Z.
Proof.
intros x y Hy. unfold int.EuclideanDivision.div.
destruct (Z_le_dec 0 (x mod y)) as [_|H]. reflexivity.
exfalso. apply H. apply Z.mod_pos_bound. lia.
Qed.

Lemma emod_pos : forall x y, (0 < y)%Z -> int.EuclideanDivision.mod1 x y = (x mod y)%Z.
Proof.
intros x y Hy. unfold int.EuclideanDivision.mod1. rewrite ediv_pos by exact Hy.
rewrite Z.mod_eq by lia. reflexivity.
Qed.

Lemma bits_value_eq : forall (scaled : Z -> Z -> R) (bits_value : Z -> R),
  (forall a b, scaled a b = IZR a * bpow radix2 b) ->
  (forall b : Z,
    (int.EuclideanDivision.div b (bv.Pow2int.pow2 52) = 0%Z ->
     bits_value b = scaled b (-1074)%Z) /\
    (~ int.EuclideanDivision.div b (bv.Pow2int.pow2 52) = 0%Z ->
     bits_value b =
     scaled (bv.Pow2int.pow2 52 + int.EuclideanDivision.mod1 b (bv.Pow2int.pow2 52))%Z
       (int.EuclideanDivision.div b (bv.Pow2int.pow2 52) - 1075)%Z)) ->
  forall b, bits_value b = bval b.
Proof.
intros scaled bits_value Hsc def b.
destruct (def b) as [H0 H1].
unfold bv.Pow2int.pow2 in *. rewrite !two_p_equiv in *.
assert (P52 : (0 < 2 ^ 52)%Z) by (apply Z.pow_pos_nonneg; lia).
rewrite !ediv_pos, !emod_pos in * by exact P52.
unfold bval.
destruct (Z.eqb_spec (b / 2 ^ 52) 0) as [E|E].
- rewrite H0 by exact E. apply Hsc.
- rewrite H1 by exact E. apply Hsc.
Qed.

Lemma round_value : forall p e n, (1 <= n)%Z -> (2 ^ (n - 1) <= p < 2 ^ n)%Z ->
  let s := Z.max (n - 53) (-1074 - e) in
  ieee_float.Float64.round ieee_float.RoundingMode.RNE (IZR p * bpow radix2 e)
  = IZR (rsig p s) * bpow radix2 (e + s).
Proof.
intros p e n Hn Hp s. rewrite f64_round. apply round_prod; assumption.
Qed.

Lemma bits_correct : forall p e n, (1 <= n)%Z -> (2 ^ (n - 1) <= p < 2 ^ n)%Z ->
  let s := Z.max (n - 53) (-1074 - e) in
  let x := IZR (rsig p s) * bpow radix2 (e + s) in
  let b := Z.min ((e + s + 1074) * 2 ^ 52 + rsig p s)%Z (2047 * 2 ^ 52)%Z in
  (x <= IZR (2 ^ 53 - 1) * bpow radix2 971 -> (b < 2047 * 2 ^ 52)%Z /\ bval b = x) /\
  (IZR (2 ^ 53 - 1) * bpow radix2 971 < x -> b = (2047 * 2 ^ 52)%Z).
Proof.
intros p e n Hn Hp s x b.
destruct (rsig_bounds p e n Hn Hp) as [Hq Hnorm]. fold s in Hq, Hnorm.
assert (Hc : (-1074 <= e + s)%Z) by (unfold s; lia).
pose proof (overflow_iff (rsig p s) (e + s) Hq Hc Hnorm) as Hov. fold x in Hov.
split.
- intros Hx. apply Hov in Hx.
  assert (Hb : b = ((e + s + 1074) * 2 ^ 52 + rsig p s)%Z) by (unfold b; lia).
  split. lia. rewrite Hb. apply bval_enc; assumption.
- intros Hx. assert (~ (x <= IZR (2 ^ 53 - 1) * bpow radix2 971)) by lra.
  assert (~ ((e + s + 1074) * 2 ^ 52 + rsig p s < 2047 * 2 ^ 52)%Z) by tauto.
  unfold b. lia.
Qed.

(* The whole binary64 product on patterns (why3/f64_round.mlw's MulDefs):
   a pattern's magnitude decoded into significand and exponent, the bit
   length of the significands' product, the sign bit above the magnitude,
   and the rounding step as one Coq function. *)

Definition max_real : R := IZR (2 ^ 53 - 1) * bpow radix2 971.

Definition rbits (p e n : Z) : Z :=
  Z.min ((e + Z.max (n - 53) (-1074 - e) + 1074) * 2 ^ 52
         + rsig p (Z.max (n - 53) (-1074 - e)))%Z (2047 * 2 ^ 52)%Z.

Lemma rbits_correct : forall p e n, (1 <= n)%Z -> (2 ^ (n - 1) <= p < 2 ^ n)%Z ->
  let x := round radix2 (FLT_exp (-1074) 53) ZnearestE (IZR p * bpow radix2 e) in
  (0 <= rbits p e n <= 2047 * 2 ^ 52)%Z /\
  (x <= max_real -> (rbits p e n < 2047 * 2 ^ 52)%Z /\ bval (rbits p e n) = x) /\
  (max_real < x -> rbits p e n = (2047 * 2 ^ 52)%Z).
Proof.
intros p e n Hn Hp x. unfold x.
pose proof (round_prod p e n Hn Hp) as Hr. cbv zeta in Hr. rewrite Hr.
pose proof (bits_correct p e n Hn Hp) as H. cbv zeta in H.
pose proof (rsig_bounds p e n Hn Hp) as Hq. cbv zeta in Hq. destruct Hq as [Hq _].
unfold rbits, max_real. split; [|exact H].
assert (P52 : (0 < 2 ^ 52)%Z) by (apply Z.pow_pos_nonneg; lia).
assert (0 <= (e + Z.max (n - 53) (-1074 - e) + 1074) * 2 ^ 52)%Z
  by (apply Z.mul_nonneg_nonneg; lia).
lia.
Qed.

Lemma bitlen_spec : forall bitlen : Z -> Z,
  (forall p : Z, ((p <= 0)%Z -> bitlen p = 0%Z) /\
    (~ (p <= 0)%Z -> bitlen p = (1 + bitlen (int.EuclideanDivision.div p 2))%Z)) ->
  forall p, (0 < p)%Z -> (1 <= bitlen p)%Z /\ (2 ^ (bitlen p - 1) <= p < 2 ^ bitlen p)%Z.
Proof.
intros bitlen def.
assert (H : forall k : nat, forall p, (0 < p <= Z.of_nat k)%Z ->
  (1 <= bitlen p)%Z /\ (2 ^ (bitlen p - 1) <= p < 2 ^ bitlen p)%Z).
{ induction k as [|k IH]; intros p Hp. lia.
  destruct (def p) as [_ Hs]. rewrite Hs by lia. rewrite ediv_pos by lia.
  destruct (Z.eq_dec p 1) as [->|Hne].
  - replace (1 / 2)%Z with 0%Z by reflexivity. destruct (def 0%Z) as [H0 _].
    rewrite H0 by lia. simpl. lia.
  - assert (Hlt : (p / 2 < p)%Z) by (apply Z.div_lt; lia).
    assert (Hpos : (0 < p / 2)%Z) by (apply Z.div_str_pos; lia).
    destruct (IH (p / 2)%Z ltac:(lia)) as [Hn [Hlo Hhi]].
    set (n := bitlen (p / 2)%Z) in *.
    replace (1 + n - 1)%Z with n by ring.
    assert (E1 : (2 ^ (1 + n) = 2 * 2 ^ n)%Z) by (rewrite Z.pow_add_r by lia; reflexivity).
    assert (E2 : (2 ^ n = 2 * 2 ^ (n - 1))%Z)
      by (rewrite <- Z.pow_succ_r by lia; f_equal; lia).
    pose proof (Z.div_mod p 2 ltac:(lia)). pose proof (Z.mod_pos_bound p 2 ltac:(lia)).
    lia. }
intros p Hp. apply (H (Z.to_nat p)). lia.
Qed.

Lemma bval_dec : forall m, (0 <= m)%Z ->
  bval m = IZR (m mod 2 ^ 52 + 2 ^ 52 * Z.min (m / 2 ^ 52) 1)
           * bpow radix2 (Z.max (m / 2 ^ 52) 1 - 1075).
Proof.
intros m Hm. unfold bval.
assert (P52 : (0 < 2 ^ 52)%Z) by (apply Z.pow_pos_nonneg; lia).
assert (Hd : (0 <= m / 2 ^ 52)%Z) by (apply Z.div_pos; lia).
destruct (Z.eqb_spec (m / 2 ^ 52) 0) as [E|E].
- assert (Hs : (m < 2 ^ 52)%Z).
  { destruct (Z_lt_le_dec m (2 ^ 52)) as [L|L]. exact L.
    assert (1 <= m / 2 ^ 52)%Z by (apply Z.div_le_lower_bound; lia). lia. }
  rewrite E, Z.mod_small by lia.
  replace (Z.max 0 1 - 1075)%Z with (-1074)%Z by reflexivity.
  f_equal. f_equal. simpl. ring.
- replace (Z.min (m / 2 ^ 52) 1) with 1%Z by lia.
  replace (Z.max (m / 2 ^ 52) 1) with (m / 2 ^ 52)%Z by lia.
  f_equal. f_equal. ring.
Qed.

Lemma sig_pos : forall m, (0 < m)%Z -> (0 < m mod 2 ^ 52 + 2 ^ 52 * Z.min (m / 2 ^ 52) 1)%Z.
Proof.
intros m Hm.
assert (P52 : (0 < 2 ^ 52)%Z) by (apply Z.pow_pos_nonneg; lia).
pose proof (Z.mod_pos_bound m (2 ^ 52) P52).
assert (Hd : (0 <= m / 2 ^ 52)%Z) by (apply Z.div_pos; lia).
destruct (Z.eq_dec (m / 2 ^ 52) 0) as [E|E].
- rewrite E. pose proof (Z.div_mod m (2 ^ 52) ltac:(lia)). rewrite E in H0. lia.
- replace (Z.min (m / 2 ^ 52) 1) with 1%Z by lia. lia.
Qed.

Lemma mul_mag : forall ma mb n, (0 < ma)%Z -> (0 < mb)%Z ->
  let sa := (ma mod 2 ^ 52 + 2 ^ 52 * Z.min (ma / 2 ^ 52) 1)%Z in
  let sb := (mb mod 2 ^ 52 + 2 ^ 52 * Z.min (mb / 2 ^ 52) 1)%Z in
  let ea := (Z.max (ma / 2 ^ 52) 1 - 1075)%Z in
  let eb := (Z.max (mb / 2 ^ 52) 1 - 1075)%Z in
  (1 <= n)%Z -> (2 ^ (n - 1) <= sa * sb < 2 ^ n)%Z ->
  let x := round radix2 (FLT_exp (-1074) 53) ZnearestE (bval ma * bval mb) in
  (0 <= rbits (sa * sb) (ea + eb) n <= 2047 * 2 ^ 52)%Z /\
  (x <= max_real -> (rbits (sa * sb) (ea + eb) n < 2047 * 2 ^ 52)%Z /\
     bval (rbits (sa * sb) (ea + eb) n) = x) /\
  (max_real < x -> rbits (sa * sb) (ea + eb) n = (2047 * 2 ^ 52)%Z).
Proof.
intros ma mb n Ha Hb sa sb ea eb Hn Hp x.
assert (Hx : bval ma * bval mb = IZR (sa * sb) * bpow radix2 (ea + eb)).
{ rewrite (bval_dec ma), (bval_dec mb) by lia. unfold sa, sb, ea, eb.
  rewrite mult_IZR, bpow_plus. ring. }
unfold x. rewrite Hx. apply rbits_correct; assumption.
Qed.

Lemma sign_split : forall s m, (0 <= s < 2)%Z -> (0 <= m < 2 ^ 63)%Z ->
  ((s * 2 ^ 63 + m) / 2 ^ 63 = s)%Z /\ ((s * 2 ^ 63 + m) mod 2 ^ 63 = m)%Z.
Proof.
intros s m Hs Hm. split.
- symmetry. apply Z.div_unique with m. lia. ring.
- symmetry. apply Z.mod_unique with s. lia. ring.
Qed.

Lemma bval_0 : bval 0 = 0%R.
Proof. unfold bval. simpl. ring. Qed.

Lemma round_0_f64 : round radix2 (FLT_exp (-1074) 53) ZnearestE 0 = 0%R.
Proof. apply round_0. apply valid_rnd_N. Qed.

Lemma max_real_pos : (0 < max_real)%R.
Proof.
unfold max_real. apply Rmult_lt_0_compat. apply IZR_lt. reflexivity. apply bpow_gt_0.
Qed.

(* f64_mul_bits as a Coq function that computes (Why3 prints it as a
   parameter and its defining axiom): the goal file of f64_mul_bits_finite
   proves the two equal on every pair (f64_mul_bits_computed), and
   tests/assurance/test_f64_mul_bits.py evaluates this one against numpy's
   and the kernel's float64 product. *)
Definition sig_of (m : Z) : Z := (m mod 2 ^ 52 + 2 ^ 52 * Z.min (m / 2 ^ 52) 1)%Z.
Definition ex_of (m : Z) : Z := (Z.max (m / 2 ^ 52) 1 - 1075)%Z.

Definition mul_bits (a b : Z) : Z :=
  let ma := (a mod 2 ^ 63)%Z in
  let mb := (b mod 2 ^ 63)%Z in
  let inf := (2047 * 2 ^ 52)%Z in
  let sgn := (((a / 2 ^ 63 + b / 2 ^ 63) mod 2) * 2 ^ 63)%Z in
  if ((inf <? ma) || (inf <? mb) || ((ma =? inf) && (mb =? 0))
      || ((ma =? 0) && (mb =? inf)))%Z%bool then (4095 * 2 ^ 51)%Z
  else if ((ma =? inf) || (mb =? inf))%Z%bool then (sgn + inf)%Z
  else if ((ma =? 0) || (mb =? 0))%Z%bool then sgn
  else
    let p := (sig_of ma * sig_of mb)%Z in
    (sgn + rbits p (ex_of ma + ex_of mb) (Z.log2 p + 1))%Z.

Lemma bitlen_log2 : forall bitlen : Z -> Z,
  (forall p : Z, ((p <= 0)%Z -> bitlen p = 0%Z) /\
    (~ (p <= 0)%Z -> bitlen p = (1 + bitlen (int.EuclideanDivision.div p 2))%Z)) ->
  forall p, (0 < p)%Z -> bitlen p = (Z.log2 p + 1)%Z.
Proof.
intros bitlen def p Hp.
destruct (bitlen_spec bitlen def p Hp) as [Hn Hb].
rewrite (Z.log2_unique p (bitlen p - 1)). ring. lia.
replace (Z.succ (bitlen p - 1)) with (bitlen p) by lia. exact Hb.
Qed.

(* The normalised product (why3/f64_round.mlw's Scaling): the bit length
   of p is the n of its range, and the rounding of p * 2^e with n bits is
   that of (p * 2^k) * 2^(e - k) with n + k bits (both are Flocq's round of
   the same real). *)

Lemma bits_unique : forall p n m, (1 <= m)%Z -> (2 ^ (m - 1) <= p < 2 ^ m)%Z ->
  (2 ^ (n - 1) <= p < 2 ^ n)%Z -> n = m.
Proof.
intros p n m Hm Hp Hq.
destruct (Z.lt_total n m) as [L|[E|G]].
- assert (2 ^ n <= 2 ^ (m - 1))%Z by (apply Z.pow_le_mono_r; lia). lia.
- exact E.
- assert (2 ^ m <= 2 ^ (n - 1))%Z by (apply Z.pow_le_mono_r; lia). lia.
Qed.

Lemma bits_shift : forall p n k, (1 <= n)%Z -> (0 <= k)%Z -> (2 ^ (n - 1) <= p < 2 ^ n)%Z ->
  (2 ^ (n + k - 1) <= p * 2 ^ k < 2 ^ (n + k))%Z.
Proof.
intros p n k Hn Hk Hp.
replace (n + k - 1)%Z with ((n - 1) + k)%Z by ring.
rewrite !Z.pow_add_r by lia.
assert (0 < 2 ^ k)%Z by (apply Z.pow_pos_nonneg; lia).
split; apply Z.mul_le_mono_pos_r || apply Z.mul_lt_mono_pos_r; lia.
Qed.

Lemma rsig_scaled : forall p e n k, (1 <= n)%Z -> (0 <= k)%Z -> (2 ^ (n - 1) <= p < 2 ^ n)%Z ->
  rsig (p * 2 ^ k) (Z.max (n + k - 53) (-1074 - (e - k))) = rsig p (Z.max (n - 53) (-1074 - e)).
Proof.
intros p e n k Hn Hk Hp.
pose proof (bits_shift p n k Hn Hk Hp) as Hp'.
pose proof (round_prod (p * 2 ^ k) (e - k) (n + k) ltac:(lia) Hp') as H1.
pose proof (round_prod p e n Hn Hp) as H2. cbv zeta in H1, H2.
assert (Heq : IZR (p * 2 ^ k) * bpow radix2 (e - k) = IZR p * bpow radix2 e).
{ rewrite mult_IZR, <- bpow_pos_IZR by exact Hk. rewrite Rmult_assoc, <- bpow_plus.
  replace (k + (e - k))%Z with e by ring. reflexivity. }
rewrite Heq, H2 in H1.
replace (e - k + Z.max (n + k - 53) (-1074 - (e - k)))%Z
  with (e + Z.max (n - 53) (-1074 - e))%Z in H1 by lia.
apply Rmult_eq_reg_r in H1. apply eq_IZR in H1. symmetry. exact H1.
apply Rgt_not_eq, bpow_gt_0.
Qed.

Lemma rbits_scaled : forall p e n k, (1 <= n)%Z -> (0 <= k)%Z -> (2 ^ (n - 1) <= p < 2 ^ n)%Z ->
  rbits (p * 2 ^ k) (e - k) (n + k) = rbits p e n.
Proof.
intros p e n k Hn Hk Hp. unfold rbits.
rewrite rsig_scaled by assumption.
replace (e - k + Z.max (n + k - 53) (-1074 - (e - k)))%Z
  with (e + Z.max (n - 53) (-1074 - e))%Z by lia.
reflexivity.
Qed.

Lemma rbits_normalised : forall p e m k n, (1 <= m)%Z -> (2 ^ (m - 1) <= p < 2 ^ m)%Z ->
  (0 <= k)%Z -> (2 ^ (n - 1) <= p * 2 ^ k < 2 ^ n)%Z ->
  rbits (p * 2 ^ k) (e - k) n = rbits p e m.
Proof.
intros p e m k n Hm Hp Hk Hn.
assert (E : n = (m + k)%Z) by (apply (bits_unique (p * 2 ^ k)); [lia | apply bits_shift | ]; assumption).
subst n. apply rbits_scaled; assumption.
Qed.
