namespace MuxWatch.Testing;

/// <summary>Waits for a condition by polling it until a deadline: never a fixed sleep.</summary>
public static class Eventually
{
    /// <summary>The default deadline, generous for a loaded 2-core CI machine.</summary>
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(30);

    /// <summary>Polls <paramref name="condition"/> until it holds; throws naming <paramref name="what"/> at the deadline.</summary>
    public static async Task UntilAsync(Func<bool> condition, string what, TimeSpan? timeout = null, Func<string?>? lastSeen = null)
    {
        ArgumentNullException.ThrowIfNull(condition);
        await UntilAsync(() => Task.FromResult(condition()), what, timeout, lastSeen).ConfigureAwait(false);
    }

    /// <summary>
    /// Polls an async condition until it holds; exceptions count as "not yet". At the deadline the message names
    /// <paramref name="what"/> and, when given, <paramref name="lastSeen"/>'s account of what the condition last saw.
    /// </summary>
    public static async Task UntilAsync(Func<Task<bool>> condition, string what, TimeSpan? timeout = null, Func<string?>? lastSeen = null)
    {
        ArgumentNullException.ThrowIfNull(condition);
        var deadline = DateTime.UtcNow + (timeout ?? DefaultTimeout);
        Exception? last = null;
        while (DateTime.UtcNow < deadline)
        {
            try
            {
                if (await condition().ConfigureAwait(false))
                {
                    return;
                }
            }
#pragma warning disable CA1031 // a condition that throws is a condition not met yet
            catch (Exception ex)
#pragma warning restore CA1031
            {
                last = ex;
            }

            await Task.Delay(50).ConfigureAwait(false);
        }

        throw new TimeoutException($"Timed out waiting for: {what}" + (last is null ? string.Empty : $" (last error: {last.Message})")
            + (lastSeen?.Invoke() is { } seen ? $" (last seen: {seen})" : string.Empty));
    }
}
