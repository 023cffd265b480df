# The checks `aoitap verify --profile claude-stream` makes, as a jq
# program a user would write (run as `jq -n -c -f claude-stream.jq`):
# the first event opens (system/init, or a hook message before it), each
# turn ends with a result, nothing but system or prompt_suggestion after
# a result, result_index counts from 0 without a gap, session_id never
# changes; the verdict is the last result's success.
reduce inputs as $e (
  {opened: false, ended: false, next: 0, sid: null, ok: null, bad: []};
  if (.opened | not) then
    if $e.type == "system" and $e.subtype == "init" then .opened = true
    elif $e.type == "system" and ($e.subtype | startswith("hook_")) then .
    else .bad += ["open-missing"] | .opened = true end
  elif .ended then
    if $e.type == "system" and $e.subtype == "init" then .ended = false
    elif $e.type == "system" or $e.type == "prompt_suggestion" then .
    else .bad += ["after-end"] end
  else . end
  | if $e.session_id != null then
      if .sid == null then .sid = $e.session_id
      elif .sid != $e.session_id then .bad += ["run-id-changed"] else . end
    else . end
  | if $e.type == "result" and (.ended | not) then
      .ended = true
      | (if $e.result_index != null then
           (if $e.result_index != .next then .bad += ["ordinal-gap"] else . end)
           | .next = $e.result_index + 1
         else . end)
      | .ok = ($e.subtype == "success" and $e.is_error == false)
    else . end
)
| if (.ended | not) then .bad += ["end-missing"] else . end
| {verdict: (if (.bad | length) > 0 then "nonconforming" elif .ok then "pass" else "failed" end), bad: .bad}
