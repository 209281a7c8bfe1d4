using System.Runtime.CompilerServices;

namespace MuxWatch.Testing;

/// <summary>
/// A pool worker blocked deep in the app's code, as in a starvation whose blocking call sits under a recursion: what
/// the stack capture must still count (the runtime samples only the innermost 100 frames of a stack).
/// </summary>
public static class DeepRecursion
{
    /// <summary>Recurses <paramref name="depth"/> frames, signals <paramref name="blocked"/>, and waits for <paramref name="release"/>.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Block(int depth, CountdownEvent blocked, ManualResetEventSlim release)
    {
        ArgumentNullException.ThrowIfNull(blocked);
        ArgumentNullException.ThrowIfNull(release);
        if (depth > 0)
        {
            Block(depth - 1, blocked, release);
            return;
        }

        blocked.Signal();
        release.Wait();
    }
}
