using System.Diagnostics;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Sends one of MuxWatch's own commands (a PING, a pub/sub probe message) through an app's multiplexer so that the
/// app's tracing leaves it out. OpenTelemetry's StackExchange.Redis instrumentation (Aspire's too) holds the
/// multiplexer's profiler slot and records every command: one sent with no <see cref="Activity.Current"/> becomes a
/// span of its own, a trace with no parent every PING interval per endpoint. Sent under a W3C activity that is not
/// recorded, the command is profiled under that parent, and the default parent-based sampler drops its span.
/// </summary>
/// <remarks>
/// The activity is made directly, from no <see cref="ActivitySource"/>, so no listener sees it or samples it in;
/// it is current only while the command is handed to the client (where the profiler session is chosen), never
/// across an await. MuxWatch never touches the profiler slot itself.
/// </remarks>
internal static class UntracedCommand
{
    private const string ActivityName = "MuxWatch.Probe";

    public static T Send<T>(Func<T> send)
    {
        var previous = Activity.Current;
        Activity.Current = null; // a child would inherit the app's recorded flag
        var hidden = new Activity(ActivityName);
        hidden.SetIdFormat(ActivityIdFormat.W3C);
        hidden.ActivityTraceFlags = ActivityTraceFlags.None;
        hidden.Start();
        try
        {
            return send();
        }
        finally
        {
            hidden.Stop();
            Activity.Current = previous;
        }
    }
}
