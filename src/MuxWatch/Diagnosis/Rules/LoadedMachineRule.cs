using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// A loaded machine: with nothing clearer found, a few dozen worker threads busy below a minimum the
/// app raised means the pool was not holding work back, so those threads were running: the app's machine was
/// busy and did not get to the reply (<c>client-cpu</c>, clear). The maintainers' reading: "the Busy=22 ...
/// indicates a bit of load built up on that machine" (issue #675), "your CPU was very busy processing
/// something, and wasn't able to get to processing the results" (#1688, Busy=96 against Min=200).
/// </summary>
internal sealed class LoadedMachineRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        if (found.Causes.Any(cause => found.Has(cause, EvidenceWeight.Clear))
            || input.Report.Field("WORKER") is not { } worker || worker.Part("Busy") is not { } busy || worker.Part("Min") is not { } min)
        {
            return;
        }

        if (min >= Thresholds.RaisedMinimumThreads && busy >= Thresholds.LoadedWorkerThreads && busy < min)
        {
            found.Add(TimeoutCause.ClientCpu, EvidenceWeight.Clear,
                $"WORKER Busy={Format(busy)} below a raised minimum of {Format(min)}: the pool was not holding work back, so those threads were running: the app's machine was busy and did not get to the reply (the maintainers' reading: \"load built up on that machine\", issue #675; \"your CPU was very busy processing something\", #1688)",
                "WORKER");
        }
    }
}
