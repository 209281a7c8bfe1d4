namespace MuxWatch.Tracking;

/// <summary>
/// Places what a server logged in whole seconds of its own clock (a slow command, a fork) on this process's clock:
/// the server's clock less its offset, widened by how far that offset may be off.
/// </summary>
/// <param name="Offset">The server's clock minus this process's.</param>
/// <param name="Uncertainty">How far <paramref name="Offset"/> may be off (half the round trip of the <c>TIME</c> it was read from).</param>
internal readonly record struct LoggedTime(TimeSpan Offset, TimeSpan Uncertainty)
{
    /// <summary>
    /// When something the server logged at <paramref name="logged"/> (its clock, in whole seconds, once it had run) ran for
    /// <paramref name="ran"/>: within [t - ran, t + 1 s] on the server's clock, widened on each side by <see cref="Uncertainty"/>.
    /// </summary>
    public (DateTimeOffset Start, DateTimeOffset End) Ran(DateTimeOffset logged, TimeSpan ran)
    {
        var client = ServerStateTracker.Shift(logged, -Offset);
        return (ServerStateTracker.Shift(client, -(ran + Uncertainty)), ServerStateTracker.Shift(client, ServerStateTracker.SecondResolution + Uncertainty));
    }
}
