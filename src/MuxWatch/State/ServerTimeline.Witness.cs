using System.Runtime.CompilerServices;
using MuxWatch.Model;

namespace MuxWatch.State;

/// <content>
/// What the endpoint's witness needs and leaves (MuxWatch's own plain connection to the server, on a dedicated
/// thread): where it reaches the server and how it checks its certificate, why it could not, and its prompt answers.
/// </content>
public sealed partial class ServerTimeline
{
    private readonly WitnessAnswers _answers = new();
    private WitnessTarget? _witnessTarget;
    private string? _witnessRefused;
    private StrongBox<DateTimeOffset>? _witnessHeldOffUntil;

    /// <summary>
    /// Where MuxWatch's witness (a plain connection of its own, on a dedicated thread) reaches this endpoint's
    /// server, the name its TLS handshake gives (null: no TLS), and how the server's certificate is checked: as the
    /// connection that polls the endpoint checks it (null: .NET's own check, the system's roots and the name). Set by
    /// the probe package that polls the endpoint; the witness starts once it is set and stops when the timeline is
    /// removed. A certificate refused means no witness (said in <see cref="Status"/>), never an unreachable server.
    /// </summary>
    public void WitnessAt(System.Net.EndPoint address, string? tlsHost, System.Net.Security.RemoteCertificateValidationCallback? certificateCheck = null)
    {
        ArgumentNullException.ThrowIfNull(address);
        Volatile.Write(ref _witnessTarget, new WitnessTarget(address, tlsHost, certificateCheck));
    }

    /// <summary>Why the witness has no connection to this server when its TLS handshake was refused (null once it connects).</summary>
    internal void NoteWitnessRefused(string? reason) => Volatile.Write(ref _witnessRefused, reason);

    /// <summary>Until when the witness is off because its connection held the witness's thread (null once it connects again).</summary>
    internal void NoteWitnessHeldOff(DateTimeOffset? until) => Volatile.Write(ref _witnessHeldOffUntil, until is { } at ? new StrongBox<DateTimeOffset>(at) : null);

    private DateTimeOffset? WitnessHeldOffUntil => Volatile.Read(ref _witnessHeldOffUntil)?.Value;

    /// <summary>Where the witness reaches the server; null until <see cref="WitnessAt"/>.</summary>
    internal WitnessTarget? Witness => Volatile.Read(ref _witnessTarget);

    /// <summary>
    /// Notes that MuxWatch's own connection (the witness) got a prompt answer to a PING sent at
    /// <paramref name="sent"/>: the server was answering then. Not an event (there is one a second); the last
    /// 90 s of them, at least, are kept for the correlator (<see cref="WitnessAnswers"/>).
    /// </summary>
    internal void NoteAnswered(DateTimeOffset sent, DateTimeOffset answered) => _answers.Note(sent, answered);

    /// <summary>The witness's prompt answers to PINGs sent at or after <paramref name="from"/> and answered by <paramref name="to"/>, oldest first.</summary>
    internal IReadOnlyList<WitnessAnswer> AnsweredWithin(DateTimeOffset from, DateTimeOffset to) => _answers.Within(from, to);

    /// <summary>The latest prompt answer the witness got at or before <paramref name="time"/>; null when none is kept.</summary>
    internal DateTimeOffset? LastAnsweredBefore(DateTimeOffset time) => _answers.LastBefore(time);
}

/// <summary>Where the witness reaches an endpoint's server.</summary>
/// <param name="Address">The server's address.</param>
/// <param name="TlsHost">The name the TLS handshake gives; null without TLS.</param>
/// <param name="CertificateCheck">How the server's certificate is checked; null: .NET's own check (the system's roots and the name).</param>
internal sealed record WitnessTarget(System.Net.EndPoint Address, string? TlsHost, System.Net.Security.RemoteCertificateValidationCallback? CertificateCheck = null);
