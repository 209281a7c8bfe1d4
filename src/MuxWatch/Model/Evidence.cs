namespace MuxWatch.Model;

/// <summary>
/// One piece of a diagnosis's evidence: the cause it speaks for, how much it weighs, what it says and the
/// message fields it rests on. Rendered as one line (<see cref="Line"/>) by the JSON answers, the log
/// and <c>explain</c>; read by its parts everywhere else.
/// </summary>
/// <param name="Role">What the line is: a finding, a server event beside the cause, a consequence, the why, a note.</param>
/// <param name="Cause">The cause it speaks for; null for a note or the why.</param>
/// <param name="Weight">How much it weighs for <paramref name="Cause"/>.</param>
/// <param name="Text">What it says, without the cause's name in front.</param>
public sealed record Evidence(EvidenceRole Role, TimeoutCause? Cause, EvidenceWeight Weight, string Text)
{
    /// <summary>The message's fields (or MuxWatch's samples, e.g. <c>live:qs</c>) it rests on.</summary>
    public IReadOnlyList<string> Fields { get; init; } = [];

    /// <summary>
    /// True when the sign appeared while the request waited (the pool was healthy just before): the text
    /// already says it may be a consequence, so the server correlation does not mark it again.
    /// </summary>
    public bool AroseDuringWait { get; init; }

    /// <summary>
    /// For a sign that <see cref="AroseDuringWait"/>: the weight it has when no stall of the server's replies can explain
    /// it. It weighs less only because a stall could have caused it; once MuxWatch's own connection shows the server
    /// answering through the wait, it weighs this (null: the same as <see cref="Weight"/>).
    /// </summary>
    internal EvidenceWeight? WeightIfNoStall { get; init; }

    /// <summary>A finding for <paramref name="cause"/>.</summary>
    public static Evidence Finding(TimeoutCause cause, EvidenceWeight weight, string text, params string[] fields) =>
        new(EvidenceRole.Finding, cause, weight, text) { Fields = fields };

    /// <summary>Why the primary cause won over the others present.</summary>
    public static Evidence Why(string text) => new(EvidenceRole.Why, null, EvidenceWeight.None, text);

    /// <summary>A note on how the message was read.</summary>
    public static Evidence Note(string text) => new(EvidenceRole.Note, null, EvidenceWeight.None, text);

    /// <summary>The text after the cause's name: <see cref="Text"/> and what its role adds.</summary>
    public string Body => Role switch
    {
        EvidenceRole.Contributing => Text + " (contributing)",
        EvidenceRole.Consequence => Text + " (a consequence: the server was blocked while the request waited)",
        _ => Text,
    };

    /// <summary>The line as shown: <c>thread-pool-starvation: WORKER Busy=40 &gt; Min=8 (...)</c>, <c>why: ...</c>.</summary>
    public string Line => Role switch
    {
        EvidenceRole.Why => "why: " + Text,
        EvidenceRole.Note => Text,
        _ => $"{(Cause ?? TimeoutCause.Unknown).ToName()}: {Body}",
    };

    /// <inheritdoc/>
    public override string ToString() => Line;
}
