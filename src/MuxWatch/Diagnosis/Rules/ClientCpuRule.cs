using System.Globalization;
using MuxWatch.Model;
using static MuxWatch.Diagnosis.Rules.Figures;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// The client short of CPU: the machine's (<c>Local-CPU</c>, 1.x and early 2.x) or, in-process,
/// this process's over the wait (its CPU time against the cores it has, or MuxWatch's sleeping thread woken
/// late: the process waited for a CPU, as under a container's CPU limit). Near saturation nothing of the
/// client runs on time. Left to <c>gc-pause</c> when collections explain the wait (they use the CPU too).
/// </summary>
internal sealed class ClientCpuRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        if (input.Report.Number("Local-CPU") is { } cpu && cpu >= Thresholds.BusyCpuPercent)
        {
            var saturated = cpu >= Thresholds.SaturatedCpuPercent;
            found.Add(TimeoutCause.ClientCpu, saturated ? EvidenceWeight.Strong : EvidenceWeight.Weak,
                $"Local-CPU: {Format(cpu)}%: the client machine's CPU was {(saturated ? "saturated, so the reader and the app's continuations could not run on time" : "busy, contributing")}",
                "Local-CPU");
        }

        if (input.Runtime is not { } runtime || found.Has(TimeoutCause.GcPause, EvidenceWeight.Strong))
        {
            return;
        }

        if (runtime.CpuShare >= Thresholds.SaturatedProcessCpuShare)
        {
            found.Add(TimeoutCause.ClientCpu, EvidenceWeight.Strong, string.Create(CultureInfo.InvariantCulture,
                $"this process used {runtime.CpuShare * 100:0}% of its {runtime.Cores} cores over the wait ({runtime.CpuMs:0} ms of CPU in {runtime.WaitMs:0} ms, sampled by MuxWatch): the reader and the continuations queued for a CPU"),
                "sampled:process-cpu");
        }
        else if (runtime.LateWakeShare >= Thresholds.LateWakeShare)
        {
            found.Add(TimeoutCause.ClientCpu, EvidenceWeight.Strong, string.Create(CultureInfo.InvariantCulture,
                $"MuxWatch's dedicated thread, which only sleeps, woke {runtime.LateWakeMs:0} ms late in total over the {runtime.WaitMs:0} ms wait ({runtime.LateWakeShare * 100:0}%): the process waited for a CPU (a busy host, CPU steal, a container's CPU limit)"),
                "sampled:late-wake");
        }
    }
}
