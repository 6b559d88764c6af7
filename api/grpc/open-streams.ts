import type { WatchedGroup } from '../../services/events/consumer-lag';

/** One Subscribe stream open in this gateway. */
export interface OpenStream {
  group: WatchedGroup;
  /** Stops the stream's consumer (it leaves the group) and ends the call with OK; resolves once the consumer is gone. */
  end(): Promise<void>;
}

/**
 * The Subscribe streams open in this gateway, by Kafka group id: Unsubscribe and ReplayFrom end a
 * group's streams before Kafka lets them delete or move it, the lag sampler watches their groups,
 * and a gateway that stops ends them all so their consumers leave their groups at once.
 */
export class OpenStreams {
  private readonly byGroup = new Map<string, Set<OpenStream>>();

  /** Registers a stream; the function returned unregisters it. */
  add(stream: OpenStream): () => void {
    const { groupId } = stream.group;
    const streams = this.byGroup.get(groupId) ?? new Set<OpenStream>();
    streams.add(stream);
    this.byGroup.set(groupId, streams);
    return () => {
      streams.delete(stream);
      if (streams.size === 0 && this.byGroup.get(groupId) === streams) this.byGroup.delete(groupId);
    };
  }

  /** The topic the group's open streams read, or null when none is open. */
  topicOf(groupId: string): string | null {
    const [first] = this.byGroup.get(groupId) ?? [];
    return first?.group.topic ?? null;
  }

  /** Ends every stream of the group; resolves with how many there were, once their consumers have left. */
  async endGroup(groupId: string): Promise<number> {
    const streams = [...(this.byGroup.get(groupId) ?? [])];
    await Promise.all(streams.map((stream) => stream.end()));
    return streams.length;
  }

  async endAll(): Promise<void> {
    await Promise.all([...this.byGroup.values()].flatMap((streams) => [...streams].map((stream) => stream.end())));
  }

  /** The groups with a stream open, once each. */
  groups(): WatchedGroup[] {
    return [...this.byGroup.values()].map((streams) => [...streams][0].group);
  }
}
